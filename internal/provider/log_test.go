package provider

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLogInboxKeepsTheLastMessages: the dev inbox holds at most its bound, newest
// first, each part capped; without KeepLast nothing is kept.
func TestLogInboxKeepsTheLastMessages(t *testing.T) {
	t.Parallel()
	p := NewLog(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	_, _ = p.Send(ctx, Message{JobID: "campaign:1:1"}) // before the inbox: not kept
	b := p.KeepLast(3)
	require.Same(t, b, p.KeepLast(10))
	for i := range 5 {
		_, err := p.Send(ctx, Message{JobID: fmt.Sprintf("campaign:7:%d", i), HTML: strings.Repeat("x", maxKeptPart+10)})
		require.NoError(t, err)
	}
	got := b.List(func(Logged) bool { return true })
	require.Len(t, got, 3)
	require.Equal(t, []string{"campaign:7:4", "campaign:7:3", "campaign:7:2"}, []string{got[0].JobID, got[1].JobID, got[2].JobID})
	require.Len(t, got[0].HTML, maxKeptPart)
	m, ok := b.Get(got[1].ID)
	require.True(t, ok)
	require.Equal(t, "campaign:7:3", m.JobID)
	_, ok = b.Get(1) // pushed out
	require.False(t, ok)
	require.Empty(t, b.List(func(l Logged) bool { return strings.HasPrefix(l.JobID, "message:") }))
}
