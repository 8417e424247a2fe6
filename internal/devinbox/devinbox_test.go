package devinbox_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/devinbox"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sequence"
)

// TestInboxShowsEveryKindOfMessage holds that an account's dev inbox shows each
// kind of message the log provider sent for it — a sequence's step among them, by
// its job id `sequence:<sequence>:<step>:<subscriber>[:<run>]` — and never another
// account's.
func TestInboxShowsEveryKindOfMessage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	accounts := account.NewService(pool)
	a, _, err := accounts.Create(ctx, "a")
	require.NoError(t, err)
	b, _, err := accounts.Create(ctx, "b")
	require.NoError(t, err)
	seqs := sequence.NewService(pool)
	seqOf := func(acct int64, name string) int64 {
		t.Helper()
		s, err := seqs.Create(ctx, acct, sequence.Definition{Name: name,
			Trigger: sequence.Trigger{Type: sequence.TriggerEvent, Event: "order"},
			Steps:   []sequence.Step{{Type: sequence.StepWait, Duration: "1d"}}})
		require.NoError(t, err)
		return s.ID
	}
	mine, theirs := seqOf(a.ID, "mine"), seqOf(b.ID, "theirs")

	log := provider.NewLog(slog.New(slog.NewTextHandler(io.Discard, nil)))
	inbox := log.KeepLast(10)
	send := func(job, subject string) {
		t.Helper()
		_, err := log.Send(ctx, provider.Message{JobID: job, To: "ada@example.com", From: "shop@example.com", Subject: subject, Text: "hi"})
		require.NoError(t, err)
	}
	send(fmt.Sprintf("message:%d:receipt-1", a.ID), "receipt")
	send(fmt.Sprintf("sequence:%d:0:77", mine), "step one")
	send(fmt.Sprintf("sequence:%d:2:77:3", mine), "step three, third run")
	send(fmt.Sprintf("sequence:%d:0:78", theirs), "their step")

	svc := devinbox.New(pool, inbox)
	got, err := svc.List(ctx, a.ID)
	require.NoError(t, err)
	var subjects []string
	for _, m := range got {
		subjects = append(subjects, m.Subject)
	}
	require.Equal(t, []string{"step three, third run", "step one", "receipt"}, subjects)
	one, err := svc.Get(ctx, a.ID, got[1].ID)
	require.NoError(t, err)
	require.Equal(t, "step one", one.Subject)
	_, err = svc.Get(ctx, b.ID, got[1].ID)
	require.Error(t, err, "another account's sequence step is not found")
	theirsList, err := svc.List(ctx, b.ID)
	require.NoError(t, err)
	require.Len(t, theirsList, 1)
	require.Equal(t, "their step", theirsList[0].Subject)
}
