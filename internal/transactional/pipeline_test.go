package transactional_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/transactional"
)

// recorder is a provider that records every call and passes it to next (nil:
// accept). It is idempotent when next is.
type recorder struct {
	next       executor.Provider
	idempotent bool
	mu         sync.Mutex
	calls      map[string]int
	order      []provider.Message
}

func (r *recorder) Idempotent() bool { return r.idempotent }

func (r *recorder) Send(ctx context.Context, m provider.Message) (string, error) {
	r.mu.Lock()
	r.calls[m.JobID]++
	r.order = append(r.order, m.Clone())
	r.mu.Unlock()
	if r.next == nil {
		return "pid-" + m.JobID, nil
	}
	return r.next.Send(ctx, m)
}

func (r *recorder) snapshot() (map[string]int, []provider.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := map[string]int{}
	for k, v := range r.calls {
		c[k] = v
	}
	return c, append([]provider.Message(nil), r.order...)
}

// idempotentSink is the HTTP provider in front of the deduplicating HTTP sink.
func idempotentSink(t *testing.T) (*recorder, *sink.HTTP) {
	t.Helper()
	s := sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL, Timeout: 5 * time.Second})
	require.NoError(t, err)
	return &recorder{next: p, idempotent: p.Idempotent(), calls: map[string]int{}}, s
}

type env struct {
	pool    *pgxpool.Pool
	svc     *transactional.Service
	builder transactional.Builder
	account int64
}

func setup(t *testing.T) env {
	t.Helper()
	pool := dbtest.New(t)
	acct := testfactory.New(pool).Account(t, "a").ID
	mb := render.NewRandomBuilder()
	links := func(a, c, m int64, email string) (string, string) {
		return fmt.Sprintf("https://example.com/u/%d.%d.%d.%s", a, c, m, email), ""
	}
	return env{pool: pool, svc: transactional.NewService(pool, mb),
		builder: transactional.Builder{Messages: mb, Links: links}, account: acct}
}

// start runs an executor with the message builder until the test ends, then
// checks the shared delivery invariant against delivered.
func (e env) start(t *testing.T, p executor.Provider, cfg executor.Config, delivered func() map[string]int) {
	t.Helper()
	cfg.Transactional = e.builder
	ex, err := executor.New(e.pool, p, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_ = ex.Start(ctx) // the executor's Start never fails
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		require.NoError(t, ex.Stop(sctx))
		invariant.Require(t, e.pool, invariant.Options{Delivered: delivered()})
	})
}

func (e env) send(t *testing.T, key, to, category string) transactional.Message {
	t.Helper()
	m, err := e.trySend(key, to, category)
	require.NoError(t, err)
	return m
}

// trySend is send for a goroutine: it returns the error for the test goroutine
// to assert.
func (e env) trySend(key, to, category string) (transactional.Message, error) {
	subject, text := "Receipt {{.Attributes.order}}", "Hi {{.Name}}"
	m, _, err := e.svc.Send(context.Background(), e.account, key, transactional.Request{To: to, ToName: "Ada",
		From: "shop@example.com", Subject: &subject, Text: &text, Data: []byte(`{"order":"A-1"}`), Category: category,
		Headers: map[string]string{"X-Order": "A-1"}})
	return m, err
}

// waitStatus waits (bounded, generously: this is no timing assertion) until the
// message leaves queued/sending, and returns it.
func (e env) waitStatus(t *testing.T, id int64) transactional.Message {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		m, err := e.svc.Get(context.Background(), e.account, id)
		require.NoError(t, err)
		if m.Status != "queued" && m.Status != "sending" {
			return m
		}
		require.True(t, time.Now().Before(deadline), "message %d still %s", id, m.Status)
		time.Sleep(10 * time.Millisecond)
	}
}

// Twenty concurrent requests under one key and five other messages: one message
// per key, one provider call per message, each delivered once.
func TestMessagesSentExactlyOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rec, s := idempotentSink(t)
	e.start(t, rec, executor.Config{Workers: 4, BatchSize: 4, Tick: time.Second, Poll: 50 * time.Millisecond},
		func() map[string]int { c, _ := rec.snapshot(); return c })
	// The goroutines only record; the test goroutine asserts (a require in a
	// goroutine ends that goroutine, not the test).
	var wg sync.WaitGroup
	ids := make([]int64, 20)
	errs := make([]error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m transactional.Message
			m, errs[i] = e.trySend("same", "ada@example.com", "")
			ids[i] = m.ID
		}()
	}
	wg.Wait()
	for i, id := range ids {
		require.NoError(t, errs[i])
		require.Equal(t, ids[0], id)
	}
	others := make([]int64, 5)
	for i := range others {
		others[i] = e.send(t, fmt.Sprintf("other-%d", i), fmt.Sprintf("u%d@example.com", i), "").ID
	}
	for _, id := range append(others, ids[0]) {
		m := e.waitStatus(t, id)
		require.Equal(t, "sent", m.Status, "%+v", m)
		require.Equal(t, 1, m.Attempts)
		require.NotNil(t, m.ProviderMessageID)
		require.NotNil(t, m.SentAt)
	}
	calls, order := rec.snapshot()
	require.Len(t, calls, 6)
	for job, n := range calls {
		require.Equal(t, 1, n, job)
	}
	require.Equal(t, int64(6), s.Stats().Unique)
	require.Zero(t, s.Stats().Duplicates)
	for _, m := range order {
		require.True(t, strings.HasPrefix(m.JobID, fmt.Sprintf("message:%d:", e.account)), m.JobID)
		require.Equal(t, "Receipt A-1", m.Subject)
		require.Equal(t, "Hi Ada", m.Text)
		require.Contains(t, m.Headers, provider.Header{Name: "X-Order", Value: "A-1"})
	}
}

// transactional is blocked by a hard bounce, a complaint or a manual suppression,
// not by an unsubscribe, and carries no List-Unsubscribe; marketing is blocked by
// every suppression and carries it.
func TestMessageSuppressionByCategory(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	for addr, reason := range map[string]string{"unsub@example.com": "unsubscribe", "bounce@example.com": "hard_bounce",
		"complaint@example.com": "complaint", "manual@example.com": "manual"} {
		_, _, err := suppression.Add(ctx, e.pool, e.account, addr, reason, "test")
		require.NoError(t, err)
	}
	want := map[string]string{}
	ids := map[string]int64{}
	for _, to := range []string{"unsub", "bounce", "complaint", "manual", "ok"} {
		for _, cat := range []string{"transactional", "marketing"} {
			key := cat + "-" + to
			ids[key] = e.send(t, key, to+"@example.com", cat).ID
			want[key] = "suppressed"
			if to == "ok" || (to == "unsub" && cat == "transactional") {
				want[key] = "sent"
			}
		}
	}
	rec := &recorder{idempotent: true, calls: map[string]int{}}
	e.start(t, rec, executor.Config{Workers: 4, BatchSize: 4, Tick: time.Second, Poll: 50 * time.Millisecond},
		func() map[string]int { c, _ := rec.snapshot(); return c })
	got := map[string]string{}
	for key, id := range ids {
		got[key] = e.waitStatus(t, id).Status
	}
	require.Equal(t, want, got)
	// Each message has its one send.* event, written by the claim that marked it
	// suppressed or by the acknowledgement of its send, as a campaign's rows do. It
	// names the message (message_id) and no subscriber: a message's send row keeps
	// the message id where a campaign's keeps the subscriber's, and an event naming
	// it subscriber_id would point at an unrelated subscriber.
	wantEvents, gotEvents := map[int64]string{}, map[int64]string{}
	for key, id := range ids {
		wantEvents[id] = "send." + want[key]
	}
	rows, err := e.pool.Query(ctx, `SELECT type, coalesce((data->>'message_id')::bigint, 0), data ? 'subscriber_id' FROM all_events
		WHERE account_id = $1 AND type LIKE 'send.%'`, e.account)
	require.NoError(t, err)
	for rows.Next() {
		var typ string
		var id int64
		var hasSubscriber bool
		require.NoError(t, rows.Scan(&typ, &id, &hasSubscriber))
		require.False(t, hasSubscriber, "a message's %s event names a subscriber", typ)
		require.NotContains(t, gotEvents, id, "two send.* events for message %d", id)
		gotEvents[id] = typ
	}
	require.NoError(t, rows.Err())
	require.Equal(t, wantEvents, gotEvents, "one send.* event per message, naming it by message_id")
	_, order := rec.snapshot()
	require.Len(t, order, 3)
	for _, m := range order {
		var unsub string
		for _, h := range m.Headers {
			if h.Name == render.HeaderListUnsubscribe {
				unsub = h.Value
			}
		}
		if m.To == "ok@example.com" && strings.Contains(m.JobID, ":marketing-") {
			require.NotEmpty(t, unsub, "a marketing message carries List-Unsubscribe")
		} else {
			require.Empty(t, unsub, "%s: a transactional message carries no List-Unsubscribe", m.JobID)
		}
	}
}

// crash claims a message as a process would that then died holding it: the claim
// dated two minutes ago with a one-minute lease, no executor id. If deliver is
// set, the dead process had handed the message to p before dying.
func crash(t *testing.T, e env, p executor.Provider, deliver bool) {
	t.Helper()
	past := time.Now().Add(-2 * time.Minute)
	var stream int64
	require.NoError(t, e.pool.QueryRow(context.Background(),
		`SELECT id FROM campaigns WHERE account_id = $1 AND kind = 'messages'`, e.account).Scan(&stream))
	rows, err := store.New(e.pool).MessageClaimBatch(context.Background(), store.MessageClaimBatchParams{
		Now: &past, Lease: pgtype.Interval{Microseconds: time.Minute.Microseconds(), Valid: true}, CampaignID: stream, N: 10,
		ViaProvider: "default", ViaIdempotent: p.Idempotent()}) // the executor's own provider
	require.NoError(t, err)
	require.Len(t, rows, 1)
	if deliver {
		m, err := e.builder.BuildMessage(rows[0])
		require.NoError(t, err)
		_, err = p.Send(context.Background(), m)
		require.NoError(t, err)
	}
}

// A process killed after handing a message to the provider and before recording
// it: the rescuer takes the expired lease back and, the provider being idempotent,
// the message is sent again with the same job id, which the sink drops: one
// delivery. With a provider that cannot deduplicate, the stream's ambiguous_policy
// (skip) reports it unknown instead of risking a second copy.
func TestMessageRescuedAfterACrash(t *testing.T) {
	t.Parallel()
	t.Run("idempotent sink", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		m := e.send(t, "reset-1", "ada@example.com", "")
		rec, s := idempotentSink(t)
		crash(t, e, rec, true)
		e.start(t, rec, executor.Config{Workers: 2, BatchSize: 2, Tick: time.Second, Poll: 50 * time.Millisecond,
			Maintenance: 50 * time.Millisecond}, func() map[string]int {
			d := map[string]int{}
			for k := range s.Deliveries() {
				d[k]++
			}
			return d
		})
		got := e.waitStatus(t, m.ID)
		require.Equal(t, "sent", got.Status, "%+v", got)
		require.Equal(t, 2, got.Attempts, "the dead claim and the replay")
		calls, _ := rec.snapshot()
		require.Equal(t, map[string]int{transactional.JobID(e.account, "reset-1"): 2}, calls, "replayed with the same job id")
		st := s.Stats()
		require.Equal(t, int64(1), st.Unique)
		require.Equal(t, int64(1), st.Replays)
		require.Zero(t, st.Duplicates)
	})
	t.Run("provider without deduplication", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		m := e.send(t, "reset-1", "ada@example.com", "")
		rec := &recorder{idempotent: false, calls: map[string]int{}}
		crash(t, e, rec, true)
		e.start(t, rec, executor.Config{Workers: 2, BatchSize: 2, Tick: time.Second, Poll: 50 * time.Millisecond,
			Maintenance: 50 * time.Millisecond}, func() map[string]int { c, _ := rec.snapshot(); return c })
		got := e.waitStatus(t, m.ID)
		require.Equal(t, "unknown", got.Status, "%+v", got)
		calls, _ := rec.snapshot()
		require.Equal(t, 1, calls[transactional.JobID(e.account, "reset-1")], "at most once")
	})
}

// sendingCampaign makes a campaign of the account that is sending, with n
// confirmed recipients queued, and returns its id.
func (e env) sendingCampaign(t *testing.T, n int) int64 {
	t.Helper()
	fx, now := testfactory.New(e.pool), time.Now()
	camp := fx.Campaign(t, e.account, testfactory.Campaign{Name: "news", Subject: "News", FromEmail: "news@example.com",
		Text: "Hello", Status: "sending", ApprovedAt: &now, StartedAt: &now})
	fx.Subscribers(t, e.account, "s", n, "confirmed")
	fx.SendsToAll(t, e.account, camp, "")
	return camp
}

// With a campaign's rows queued ahead of it, a message is the first thing sent.
func TestMessageServedAheadOfCampaign(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.sendingCampaign(t, 200)
	m := e.send(t, "reset-1", "ada@example.com", "")
	rec := &recorder{idempotent: true, calls: map[string]int{}}
	e.start(t, rec, executor.Config{Workers: 1, BatchSize: 1, Tick: time.Second, Poll: 50 * time.Millisecond},
		func() map[string]int { c, _ := rec.snapshot(); return c })
	require.Equal(t, "sent", e.waitStatus(t, m.ID).Status)
	_, order := rec.snapshot()
	require.Equal(t, transactional.JobID(e.account, "reset-1"), order[0].JobID)
}
