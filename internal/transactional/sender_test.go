package transactional_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/transactional"
)

// routes is the executor's Senders for a test: a provider per sender id.
type routes map[int64]executor.Provider

func (r routes) Route(_ context.Context, _, senderID int64) (executor.Route, error) {
	if p, ok := r[senderID]; ok {
		return executor.Route{Provider: p}, nil
	}
	return executor.Route{}, errors.New("no such sender")
}

func (r routes) Report(context.Context, int64, int64, string, error) {}

// A message that names a sender leaves through that sender's provider, one without
// through the account's default sender, each once; the executor's own provider
// sends nothing.
func TestMessageGoesThroughItsSender(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	sn, err := sender.NewService(e.pool, nil).Create(ctx, e.account, sender.Input{Name: "relay", Type: "http",
		Settings: sender.Settings{URL: "https://mail.example.net/send"}, AllowedFrom: []string{}})
	require.NoError(t, err)
	def, err := sender.NewService(e.pool, nil).Create(ctx, e.account, sender.Input{Name: "default", Type: "http",
		Settings: sender.Settings{URL: "https://default.example.net/send"}, AllowedFrom: []string{}, Default: true})
	require.NoError(t, err)
	subject, text := "Receipt", "Hi"
	named, _, err := e.svc.Send(ctx, e.account, "via-relay", transactional.Request{To: "ada@example.com",
		From: "shop@example.com", Subject: &subject, Text: &text, SenderID: &sn.ID})
	require.NoError(t, err)
	plain := e.send(t, "default", "bob@example.com", "")

	relay := &recorder{idempotent: true, calls: map[string]int{}}
	dflt := &recorder{idempotent: true, calls: map[string]int{}}
	env := &recorder{idempotent: true, calls: map[string]int{}}
	e.start(t, env, executor.Config{Workers: 2, BatchSize: 2, Tick: time.Second, Poll: 20 * time.Millisecond,
		Senders: routes{sn.ID: relay, def.ID: dflt}}, func() map[string]int {
		all := map[string]int{}
		for _, p := range []*recorder{env, relay, dflt} {
			c, _ := p.snapshot()
			for k, v := range c {
				all[k] += v
			}
		}
		return all
	})
	require.Equal(t, "sent", e.waitStatus(t, named.ID).Status)
	require.Equal(t, "sent", e.waitStatus(t, plain.ID).Status)
	r, _ := relay.snapshot()
	d, _ := dflt.snapshot()
	x, _ := env.snapshot()
	require.Equal(t, map[string]int{transactional.JobID(e.account, "via-relay"): 1}, r)
	require.Equal(t, map[string]int{transactional.JobID(e.account, "default"): 1}, d)
	require.Empty(t, x)
}
