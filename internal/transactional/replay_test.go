package transactional_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/transactional"
)

// A retry of an accepted message answers the stored message, whatever changed
// since: its template deleted, its From no longer allowed by the sender. The
// message exists and may be sent; refusing the retry (as validating before the
// key lookup once did, with a 422) makes the client resend under a new key, and
// the recipient gets two copies. Another body under the key is still refused.
func TestRetryAnswersTheStoredMessageAfterItsTemplateAndFromChanged(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	_, err := sender.NewService(e.pool, nil).Create(ctx, e.account, sender.Input{Name: "default", Type: "http",
		Settings: sender.Settings{URL: "https://mail.example.net/send"}, AllowedFrom: []string{"shop@example.com"},
		Default: true})
	require.NoError(t, err)
	tpl := testfactory.New(e.pool).Template(t, e.account, testfactory.Template{Name: "receipt", Subject: "Receipt", Text: "Hi"})
	req := transactional.Request{To: "ada@example.com", From: "shop@example.com", TemplateID: &tpl}
	first, created, err := e.svc.Send(ctx, e.account, "order-1", req)
	require.NoError(t, err)
	require.True(t, created)

	_, err = e.pool.Exec(ctx, `DELETE FROM templates WHERE id = $1`, tpl)
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `UPDATE senders SET allowed_from = '{other.example}' WHERE account_id = $1`, e.account)
	require.NoError(t, err)

	again, created, err := e.svc.Send(ctx, e.account, "order-1", req)
	require.NoError(t, err, "the retry of an accepted message")
	require.False(t, created)
	require.Equal(t, first.ID, again.ID)

	// The same in a caller's transaction (the double opt-in confirmation's way).
	tx, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // rolled back after a failed assertion only
	id, created, err := e.svc.SendTx(ctx, tx, e.account, "order-1", req)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, first.ID, id)
	require.NoError(t, tx.Commit(ctx))

	// Another body under the key: refused as reused, not as invalid content.
	other := req
	other.To = "bob@example.com"
	_, _, err = e.svc.Send(ctx, e.account, "order-1", other)
	require.ErrorContains(t, err, "Idempotency-Key was used for another message")
}
