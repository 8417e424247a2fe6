package executor

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// plainBuilder builds a transactional message's provider message from its row,
// without templates: what the executor's tests need of Config.Transactional.
type plainBuilder struct{}

func (plainBuilder) BuildMessage(r store.MessageClaimBatchRow) (provider.Message, error) {
	return provider.Message{JobID: r.JobID, MessageID: r.JobID + "@test", From: r.FromEmail, To: r.Email,
		Subject: r.Subject, Text: r.Text}, nil
}

// swapRoutes is a Senders whose routes a test changes while the executor runs.
type swapRoutes struct {
	mu   sync.Mutex
	byID map[int64]Route
}

func (r *swapRoutes) Route(_ context.Context, _, id int64) (Route, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rt, ok := r.byID[id]
	if !ok {
		return Route{}, fmt.Errorf("no sender %d", id)
	}
	return rt, nil
}

func (r *swapRoutes) set(id int64, rt Route) { r.mu.Lock(); r.byID[id] = rt; r.mu.Unlock() }

func (r *swapRoutes) Report(context.Context, int64, int64, string, error) {}

// message accepts one transactional message of acct into its default stream (or
// the stream of senderID), as the API does, and returns its send row's id.
func (f fixture) message(acct int64, senderID *int64, key, to string) int64 {
	f.t.Helper()
	ctx := context.Background()
	q := store.New(f.pool)
	stream, err := q.MessageStreamEnsure(ctx, store.MessageStreamEnsureParams{AccountID: acct, SenderID: senderID})
	require.NoError(f.t, err)
	h := sha256.Sum256([]byte(key))
	id, err := q.MessageInsert(ctx, store.MessageInsertParams{AccountID: acct, IdempotencyKey: key, RequestHash: h[:],
		Category: "transactional", ToEmail: to, FromEmail: "shop@example.com", Subject: "Receipt", Text: "Hi",
		Data: []byte(`{}`), Headers: []byte(`[]`), Tags: []string{}, SenderID: senderID})
	require.NoError(f.t, err)
	job := fmt.Sprintf("message:%d:%s", acct, key)
	require.NoError(f.t, q.MessageSendInsert(ctx, store.MessageSendInsertParams{StreamID: stream, AccountID: acct,
		MessageID: id, Email: to, JobID: job}))
	return f.int64(`SELECT id FROM sends WHERE job_id = $1`, job)
}

// sender makes a sender of acct and returns its id.
func (f fixture) sender(acct int64, name, typ string, isDefault bool) int64 {
	return testfactory.New(f.pool).Sender(f.t, acct, name, typ, isDefault)
}

// streamOf is the dealer's campaign of acct's message stream, refreshed as dispatch does.
func streamOf(t *testing.T, e *Executor, d *dealer, acct int64) *campaign {
	t.Helper()
	require.NoError(t, e.refresh(context.Background(), d))
	for _, c := range d.byID {
		if c.AccountID == acct && c.isStream() {
			return c
		}
	}
	t.Fatalf("no message stream of account %d", acct)
	return nil
}

// messageSetup is an executor with a message builder and routes over an account
// (not the first: ids of accounts, senders and messages differ) whose default
// sender is of type typ.
func messageSetup(t *testing.T, env Provider, typ string, viaDefault Provider) (fixture, *Executor, *swapRoutes, int64, int64, *heldClock) {
	t.Helper()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	clk := newClock()
	f.account("other")
	acct := f.account("a")
	f.sender(acct, "unrelated", "http", false)
	def := f.sender(acct, "relay", typ, true)
	r := &swapRoutes{byID: map[int64]Route{def: {Provider: viaDefault}}}
	e, err := New(pool, env, Config{Now: clk.Now, Lease: time.Minute, MaxAttempts: 5, BackoffBase: time.Second,
		BackoffMax: time.Minute, Workers: 10, BatchSize: 10, Senders: r, Transactional: plainBuilder{}}, nil, nil)
	require.NoError(t, err)
	return f, e, r, acct, def, clk
}

// TestRescueOfAMessageOverANonIdempotentDefaultSenderIsUnknown: the default
// message stream names no sender but sends through the account's default sender,
// here SMTP, which cannot deduplicate. A message in flight when its process died
// may have been delivered: with ambiguous_policy skip it becomes unknown. The
// executor's own provider (idempotent, as `log` is) has no say: the row was not
// sent through it.
func TestRescueOfAMessageOverANonIdempotentDefaultSenderIsUnknown(t *testing.T) {
	t.Parallel()
	env, smtp := newFake(true), newFake(false)
	f, e, _, acct, _, clk := messageSetup(t, env, "smtp", smtp)
	t.Cleanup(func() { invariant.Require(t, f.pool, invariant.Options{}) })
	id := f.message(acct, nil, "reset-1", "ada@example.com")
	ctx := context.Background()
	d := e.newDealer()
	c := streamOf(t, e, d, acct)
	rows, err := e.claimMessages(ctx, c, e.routeOf(c), 10)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	clk.Add(61 * time.Second) // the process died with the message at the SMTP server
	n, err := e.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "unknown", readSend(t, f.pool, id).Status, "no second copy is risked over SMTP")
}

// TestReplayNeverGoesThroughAnotherSender: a message in flight through an
// idempotent default sender is rescued for a replay; meanwhile the account's
// default becomes an SMTP sender. The replay must not go out through SMTP (which
// would deliver a second copy the first provider may already have delivered):
// under skip the row becomes unknown.
func TestReplayNeverGoesThroughAnotherSender(t *testing.T) {
	t.Parallel()
	env, resend, smtp := newFake(true), newFake(true), newFake(false)
	f, e, r, acct, def, clk := messageSetup(t, env, "resend", resend)
	t.Cleanup(func() { invariant.Require(t, f.pool, invariant.Options{}) })
	id := f.message(acct, nil, "reset-2", "ada@example.com")
	ctx := context.Background()
	d := e.newDealer()
	c := streamOf(t, e, d, acct)
	rows, err := e.claimMessages(ctx, c, e.routeOf(c), 10)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	clk.Add(61 * time.Second)
	_, err = e.rescue(ctx)
	require.NoError(t, err)
	require.Equal(t, "queued", readSend(t, f.pool, id).Status, "an idempotent provider drops the replay")

	// The default changes to an SMTP sender while the replay waits.
	other := f.sender(acct, "smtp", "smtp", false)
	f.exec(`UPDATE senders SET is_default = false WHERE id = $1`, def)
	f.exec(`UPDATE senders SET is_default = true WHERE id = $1`, other)
	r.set(other, Route{Provider: smtp})
	claimAndSend(t, e, streamOf(t, e, d, acct), clk)
	calls, _, _ := smtp.snapshot()
	require.Empty(t, calls, "the replay went out through another provider")
	require.Equal(t, "unknown", readSend(t, f.pool, id).Status)
}

// TestAClaimRecordsItsRoute: the claim writes on the row which sender and provider
// it is sent through and whether that provider deduplicates, for the rescuer.
func TestAClaimRecordsItsRoute(t *testing.T) {
	t.Parallel()
	env, smtp := newFake(true), newFake(false)
	f, e, _, acct, def, _ := messageSetup(t, env, "smtp", smtp)
	id := f.message(acct, nil, "reset-3", "ada@example.com")
	ctx := context.Background()
	d := e.newDealer()
	c := streamOf(t, e, d, acct)
	_, err := e.claimMessages(ctx, c, e.routeOf(c), 10)
	require.NoError(t, err)
	var sender *int64
	var idem *bool
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT via_sender_id, via_idempotent FROM sends WHERE id = $1`, id).Scan(&sender, &idem))
	require.NotNil(t, sender)
	require.Equal(t, def, *sender)
	require.NotNil(t, idem)
	require.False(t, *idem)
}

// claimAndSend claims stream c's due messages through its current route, as
// dealStream does, sends them and acknowledges the outcomes.
func claimAndSend(t *testing.T, e *Executor, c *campaign, clk *heldClock) {
	t.Helper()
	rt := e.routeOf(c)
	msgs, err := e.claimMessages(context.Background(), c, rt, 10)
	require.NoError(t, err)
	rows := make([]store.SendClaimBatchRow, len(msgs))
	for i, m := range msgs {
		rows[i] = store.SendClaimBatchRow{ID: m.ID, AccountID: m.AccountID, SubscriberID: m.SubscriberID,
			Email: m.Email, JobID: m.JobID, Status: m.Status, Attempts: m.Attempts, LeaseUntil: m.LeaseUntil}
	}
	e.handOutWith(c, rt, rows, clk.Now(), msgs)
	var res []result
	for len(e.messageJobs) > 0 {
		res = append(res, e.send(context.Background(), <-e.messageJobs))
	}
	e.flush(res)
}

var errAuth = &provider.Error{Class: provider.Temporary, Code: 401, Config: true, Err: errors.New("invalid api key")}

// TestMessageOnAuthFailureWaitsForTheSender: a transactional message whose
// sender answers with auth failures (a botched key rotation) is not failed after
// MaxAttempts: it waits for the sender to be fixed, as a campaign does. Once the
// sender is paused its stream is not claimed at all; a message that has waited
// longer than MessageHoldMax (24h by default) fails with the pause's reason.
func TestMessageOnAuthFailureWaitsForTheSender(t *testing.T) {
	t.Parallel()
	env, bad := newFake(true), newFake(false)
	bad.fail = func(provider.Message, int) error { return errAuth }
	f, e, _, acct, def, clk := messageSetup(t, env, "postmark", bad)
	id := f.message(acct, nil, "reset-4", "ada@example.com")
	f.exec(`UPDATE messages SET created_at = $1`, clk.Now())
	ctx := context.Background()
	d := e.newDealer()
	for range 8 {
		claimAndSend(t, e, streamOf(t, e, d, acct), clk)
		clk.Add(2 * time.Minute)
	}
	got := readSend(t, f.pool, id)
	require.Equal(t, "queued", got.Status, "failed after %d auth failures: %s", got.Attempts, got.LastError)
	require.Equal(t, 8, got.Attempts)

	// The sender is paused (as the router does after repeated auth failures): its
	// stream is held, not claimed.
	f.exec(`UPDATE senders SET paused_reason = 'sender: 5 auth/config failures in a row, last: 401', paused_at = now()
		WHERE id = $1`, def)
	require.True(t, streamOf(t, e, d, acct).SenderPaused)
	clk.Add(time.Hour)
	_, err := dealSync(ctx, e, d)
	require.NoError(t, err)
	require.Empty(t, e.messageJobs, "a paused sender's stream is held")
	require.NoError(t, e.maintainOnce(ctx))
	require.Equal(t, "queued", readSend(t, f.pool, id).Status, "younger than MessageHoldMax: it waits")

	clk.Add(24 * time.Hour)
	require.NoError(t, e.maintainOnce(ctx))
	got = readSend(t, f.pool, id)
	require.Equal(t, "failed", got.Status)
	require.Equal(t, "held longer than 24:00:00 while its sender is paused: "+
		"sender: 5 auth/config failures in a row, last: 401", got.LastError)
	require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM events WHERE type = 'send.failed'
		AND (data->>'send_id')::bigint = $1`, id))
	calls, _, _ := bad.snapshot()
	require.Equal(t, map[string]int{fmt.Sprintf("message:%d:reset-4", acct): 8}, calls)
}

// TestMessageOnAuthFailureFailsPastTheHoldMax: an auth failure on a message that
// has already waited MessageHoldMax fails it with the reason.
func TestMessageOnAuthFailureFailsPastTheHoldMax(t *testing.T) {
	t.Parallel()
	env, bad := newFake(true), newFake(false)
	bad.fail = func(provider.Message, int) error { return errAuth }
	f, e, _, acct, _, clk := messageSetup(t, env, "postmark", bad)
	id := f.message(acct, nil, "reset-5", "ada@example.com")
	f.exec(`UPDATE messages SET created_at = $1`, clk.Now().Add(-25*time.Hour))
	claimAndSend(t, e, streamOf(t, e, e.newDealer(), acct), clk)
	got := readSend(t, f.pool, id)
	require.Equal(t, "failed", got.Status)
	require.Contains(t, got.LastError, "held longer than 24h0m0s while its sender fails: ")
	require.Contains(t, got.LastError, "invalid api key")
}
