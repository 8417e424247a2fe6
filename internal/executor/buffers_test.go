package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/provider"
)

// borrowChecker is a provider that reads each message as a real one does while
// Send runs, and checks after each Send that the message it was handed (not a
// copy) is still whole: a worker reuses its buffers only for its next message.
type borrowChecker struct {
	*fakeProvider
	mu     sync.Mutex
	bodies map[string]string // job id → HTML as read during Send
}

func (p *borrowChecker) Send(ctx context.Context, m provider.Message) (string, error) {
	p.mu.Lock()
	p.bodies[m.JobID] = strings.Clone(m.HTML)
	p.mu.Unlock()
	if !strings.Contains(m.HTML, "<p>Hi Sub ") || !strings.Contains(m.Text, "Hi Sub ") {
		return "", fmt.Errorf("message %s is not whole during Send: %q", m.JobID, m.HTML)
	}
	return p.fakeProvider.Send(ctx, m)
}

// TestWorkersRenderIntoTheirOwnBuffers: campaign messages rendered into each
// worker's reused buffers (render.BuildInto) reach the provider whole and each
// with its own recipient's content, many workers at once.
func TestWorkersRenderIntoTheirOwnBuffers(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 200, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Second))
	p := &borrowChecker{fakeProvider: newFake(true), bodies: map[string]string{}}
	e := newExecutor(t, pool, p, Config{Tick: 50 * time.Millisecond, Workers: 8, BatchSize: 25, Poll: 20 * time.Millisecond})
	runUntil(t, e)
	waitSent(t, f, e, c)
	_, _, order := p.snapshot()
	require.Len(t, order, 200)
	for _, m := range order {
		var i int
		_, err := fmt.Sscanf(m.To, "r%d@example.com", &i)
		require.NoError(t, err)
		want := fmt.Sprintf("<p>Hi Sub %d %d</p>", i, i)
		require.Contains(t, m.HTML, want, "the copy the fake kept is this recipient's")
		require.Equal(t, p.bodies[m.JobID], m.HTML, "what the provider read during Send")
		require.Equal(t, fmt.Sprintf("Hi Sub %d", i), m.Text)
	}
}
