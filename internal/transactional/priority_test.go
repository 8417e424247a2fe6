package transactional_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/transactional"
)

// gate is a provider that holds every campaign send until the test releases it
// and lets messages through at once, so a test decides when workers free up.
type gate struct {
	release chan struct{}
	mu      sync.Mutex
	held    int            // campaign sends waiting for a release
	sent    map[string]int // job id → calls that returned
	arrived []string       // job ids in the order they reached the provider
}

func (g *gate) Idempotent() bool { return true }

func (g *gate) Send(ctx context.Context, m provider.Message) (string, error) {
	g.mu.Lock()
	g.arrived = append(g.arrived, m.JobID)
	campaign := !strings.HasPrefix(m.JobID, "message:")
	if campaign {
		g.held++
	}
	g.mu.Unlock()
	if campaign {
		select {
		case <-g.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if campaign {
		g.held--
	}
	g.sent[m.JobID]++
	return "pid-" + m.JobID, nil
}

func (g *gate) delivered() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for k, v := range g.sent {
		out[k] = v
	}
	return out
}

// waitFor polls cond (bounded generously: no timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waiting for %s", what)
		time.Sleep(5 * time.Millisecond)
	}
}

// A message is claimed for one free worker slot and is the next job a worker
// takes, ahead of the campaign rows claimed before it: every worker and every
// prefetch slot holds a campaign row, one worker frees up (the message is claimed
// for that slot while the worker has taken the next campaign row), and the next
// worker to free up sends the message. Campaign claims wait for half a batch of free slots; a message
// must not (it waited there, and then behind the whole prefetched batch).
func TestMessageClaimedForOneFreeSlot(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	camp := e.sendingCampaign(t, 100)
	g := &gate{release: make(chan struct{}), sent: map[string]int{}}
	const workers, batch = 4, 8 // two batches claimed ahead, four of them held by the workers
	e.start(t, g, executor.Config{Workers: workers, BatchSize: batch, Tick: time.Second, Poll: 50 * time.Millisecond},
		g.delivered)
	t.Cleanup(func() { close(g.release) }) // runs before the executor's Stop
	count := func(sql string, args ...any) int {
		var n int
		require.NoError(t, e.pool.QueryRow(ctx, sql, args...).Scan(&n))
		return n
	}
	held := func() int { g.mu.Lock(); defer g.mu.Unlock(); return g.held }
	waitFor(t, "every slot holding a campaign row", func() bool {
		// The dispatcher keeps two batches claimed ahead (the prefetch queue, whose
		// room comes back as workers take rows): 2×batch rows leased, 4 of them held.
		return held() == workers &&
			count(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'sending'`, camp) == 2*batch
	})

	m := e.send(t, "reset-1", "ada@example.com", "")
	arrived := func() []string { g.mu.Lock(); defer g.mu.Unlock(); return append([]string(nil), g.arrived...) }
	job := transactional.JobID(e.account, "reset-1")
	// Counted before the first worker frees up: that worker may take the message
	// itself, at once, if its claim beats the worker to the queue.
	before := len(arrived())
	g.release <- struct{}{} // one worker frees up
	waitFor(t, "the message claimed with one slot free", func() bool {
		return count(`SELECT count(*) FROM sends WHERE job_id LIKE 'message:%' AND status <> 'queued'`) == 1
	})
	// Free workers one at a time until the message reaches the provider. The next
	// worker to free up takes it; at most two campaign rows may get there first:
	// the one the first freed worker took, and one taken in the instant between the
	// claim's commit, which the wait above saw, and the message reaching its queue.
	// Behind the prefetched batch it would come after 7 of them; waiting for half a
	// batch of free slots, it would not be claimed by the wait above at all.
	for !slices.Contains(arrived(), job) {
		n := len(arrived())
		g.release <- struct{}{}
		waitFor(t, "the next job to reach the provider", func() bool { return len(arrived()) > n })
	}
	got := arrived()[before:]
	ahead := slices.Index(got, job)
	require.GreaterOrEqual(t, ahead, 0, "the message is not among the jobs that reached the provider since: %v", got)
	require.LessOrEqual(t, ahead, 2, "campaign rows that reached the provider ahead of the message: %v", got[:ahead])
	require.Equal(t, "sent", e.waitStatus(t, m.ID).Status)
}
