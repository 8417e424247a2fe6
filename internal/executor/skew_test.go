package executor

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// A host whose clock is off from PostgreSQL's: leases, heartbeats and retry times
// are the database's (every replica judges them on its now()), so an executor
// whose own clock runs 30 s behind or ahead (Config.ClockSkew) must neither send
// a row whose lease the database already counts as (nearly) over, nor hand back
// rows it could have sent, nor move a retry earlier or later than it was asked.

// skews are the host clocks the tests play: behind and ahead of PostgreSQL's.
var skews = []time.Duration{-30 * time.Second, 30 * time.Second}

// leaseProbe is an idempotent provider that, at every send, asks the database how
// much of that row's lease is left on the database's own clock.
type leaseProbe struct {
	*fakeProvider
	pool *pgxpool.Pool
	mu   sync.Mutex
	left []time.Duration
}

func (p *leaseProbe) Send(ctx context.Context, m provider.Message) (string, error) {
	var us int64
	if err := p.pool.QueryRow(ctx, `SELECT (extract(epoch FROM lease_until - now()) * 1e6)::bigint
		FROM sends WHERE job_id = $1 AND status = 'sending'`, m.JobID).Scan(&us); err != nil {
		return "", fmt.Errorf("probe %s: %w", m.JobID, err)
	}
	p.mu.Lock()
	p.left = append(p.left, time.Duration(us)*time.Microsecond)
	p.mu.Unlock()
	return p.fakeProvider.Send(ctx, m)
}

// TestSkewedClockSendsOnlyWithinTheDatabaseLease runs a campaign through an
// executor whose clock is 30 s behind, then ahead of, PostgreSQL's: a lease
// judged on the host's clock against the database's lease_until would look 30 s
// longer than it is (behind) or over before it began (ahead). Slow: a 3 s lease,
// one worker behind a queue of ten rows at 400 ms a send, so rows wait in the
// queue longer than their lease; every send must start with more than a third
// of its lease left on the database's clock (rows left too short are handed back
// and claimed again). Fast: a 30 s lease, no row waits long, and none may be
// handed back.
func TestSkewedClockSendsOnlyWithinTheDatabaseLease(t *testing.T) {
	t.Parallel()
	for _, skew := range skews {
		for _, slow := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/slow=%v", skew, slow), func(t *testing.T) {
				t.Parallel()
				// The heartbeat is slow enough that a loaded machine does not make the
				// workers hand rows back for a late beat (sendable), which is not what
				// this test is about.
				lease := 30 * time.Second
				n, cfg := 120, Config{ClockSkew: skew, Lease: lease, Heartbeat: time.Second,
					Tick: 100 * time.Millisecond, Poll: 20 * time.Millisecond, Workers: 4, BatchSize: 10}
				pool := dbtest.New(t)
				p := &leaseProbe{fakeProvider: newFake(true), pool: pool}
				if slow {
					// Ten rows queued for one worker at 400 ms a send: the last waits 4 s.
					lease = 3 * time.Second
					n, cfg.Lease, cfg.Workers, cfg.BatchSize = 16, lease, 1, 5
					p.fail = func(provider.Message, int) error { time.Sleep(400 * time.Millisecond); return nil }
				}
				f := fixture{t, pool}
				acct := f.account("a")
				f.subscribers(acct, "r", n, "confirmed")
				c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Hour))
				e := newExecutor(t, pool, p, cfg)
				runUntil(t, e)
				waitSent(t, f, e, c)
				require.Equal(t, map[string]int{"sent": n}, f.counts(c))
				p.mu.Lock()
				defer p.mu.Unlock()
				require.Len(t, p.left, n, "one send per recipient")
				// A third of the lease, less the probe's own round trip (generously: the
				// machine may be loaded; a lease judged on the host's clock shows here
				// as one long over).
				least := lease/3 - 500*time.Millisecond
				for _, left := range p.left {
					require.Greater(t, left, least, "a send started with %s of its lease left in the database", left)
				}
				var released dto.Metric
				require.NoError(t, e.metrics.sends.WithLabelValues("released").Write(&released))
				if !slow {
					require.Zero(t, released.GetCounter().GetValue(), "rows handed back unsent with their lease ahead of them")
				} else {
					t.Logf("%v rows handed back for want of lease", released.GetCounter().GetValue())
				}
			})
		}
	}
}

// TestSkewedClockKeepsTheRetryTime: a provider's temporary refusal with
// Retry-After: 10s is retried 10 s later on the database's clock, which the claim
// reads (next_attempt_at <= now()), whatever the host's clock says: not at once
// (host 30 s behind) nor 40 s later (ahead). So is the rest that 429 gives its
// domain group, which a row of the same domain, held back by pacing, waits out.
func TestSkewedClockKeepsTheRetryTime(t *testing.T) {
	t.Parallel()
	for _, skew := range skews {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			pool := dbtest.New(t)
			f := fixture{t, pool}
			acct := f.account("a")
			f.subscribers(acct, "r", 2, "confirmed")
			id := f.campaign(acct, nil, "skip", time.Now().Add(-time.Hour))
			p := newFake(true)
			p.fail = func(m provider.Message, _ int) error {
				if m.To == "r1@example.com" {
					return &provider.Error{Class: provider.Temporary, Code: 429, RetryAfter: 10 * time.Second,
						Err: fmt.Errorf("slow down")}
				}
				return temporary("try later")
			}
			e := newExecutor(t, pool, p, Config{ClockSkew: skew, Lease: time.Minute, MaxAttempts: 5,
				BackoffBase: 2 * time.Second, BackoffMax: 2 * time.Second, Workers: 4, BatchSize: 10})
			ctx := context.Background()
			_, err := e.startDue(ctx)
			require.NoError(t, err)
			c := sendingCampaign(t, e, id)
			rows, err := e.claim(ctx, c, 2)
			require.NoError(t, err)
			require.Len(t, rows, 2)
			var results []result
			for _, r := range rows {
				results = append(results, e.send(ctx, job{campaign: c, row: r}))
			}
			e.flush(results)
			waits := map[string]time.Duration{}
			got, err := pool.Query(ctx, `SELECT email, (extract(epoch FROM next_attempt_at - now()) * 1e6)::bigint
				FROM sends WHERE campaign_id = $1 AND status = 'queued'`, id)
			require.NoError(t, err)
			for got.Next() {
				var email string
				var us int64
				require.NoError(t, got.Scan(&email, &us))
				waits[email] = time.Duration(us) * time.Microsecond
			}
			require.NoError(t, got.Err())
			require.Len(t, waits, 2)
			// Retry-After: exactly its 10 s, less the time the test took since.
			require.InDelta(t, 10*time.Second, waits["r1@example.com"], float64(2*time.Second),
				"Retry-After 10s became %s on the database's clock", waits["r1@example.com"])
			// r2 is of the same domain: r1's 429 rested the group (pacing.go), so r2
			// was held back, released to wait with the group (about the Retry-After,
			// jittered ±10 %), not its own 1-2 s backoff. Its wait reaches the
			// database as a wait, not a skewed time.
			require.InDelta(t, 10*time.Second, waits["r2@example.com"], float64(2*time.Second),
				"the group's 10 s rest became %s on the database's clock", waits["r2@example.com"])
			// Settle the rows so the invariant holds at the end.
			f.exec(`UPDATE sends SET next_attempt_at = now() WHERE campaign_id = $1`, id)
			p.fail = nil
			rows, err = e.claim(ctx, c, 2)
			require.NoError(t, err)
			results = results[:0]
			for _, r := range rows {
				results = append(results, e.send(ctx, job{campaign: c, row: r}))
			}
			e.flush(results)
		})
	}
}

// TestSkewedClockWakesForTheScheduledCampaign: the scheduler sleeps until the next
// approved campaign is due on the database's clock (which startDue reads): a
// host 30 s ahead must not poll every 10 ms for half a minute, nor one 30 s
// behind start the campaign half a minute late.
func TestSkewedClockWakesForTheScheduledCampaign(t *testing.T) {
	t.Parallel()
	for _, skew := range skews {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			pool := dbtest.New(t)
			f := fixture{t, pool}
			acct := f.account("a")
			c := f.campaign(acct, nil, "skip", time.Now())
			f.exec(`UPDATE campaigns SET scheduled_for = now() + interval '20 seconds' WHERE id = $1`, c)
			e := newExecutor(t, pool, newFake(true), Config{ClockSkew: skew, Tick: time.Hour})
			wait := e.untilNextDue(context.Background())
			require.InDelta(t, 20*time.Second, wait, float64(2*time.Second),
				"the scheduler would wake %s from now for a campaign due in 20 s", wait)
			f.exec(`UPDATE campaigns SET status = 'draft', scheduled_for = NULL WHERE id = $1`, c)
		})
	}
}

// TestSkewedClockWakesForTheQueuedMessage: an idle message stream sleeps until its
// earliest queued row is due, as the sweep found it; the claim reads the
// database's clock, so that row is due 20 s from now on the executor's clock
// too, whatever that clock says: not 30 s late (host behind) nor 30 s early,
// when every sweep would claim the stream for nothing (ahead).
func TestSkewedClockWakesForTheQueuedMessage(t *testing.T) {
	t.Parallel()
	for _, skew := range skews {
		t.Run(skew.String(), func(t *testing.T) {
			t.Parallel()
			pool := dbtest.New(t)
			f := fixture{t, pool}
			acct := f.account("a")
			c := f.campaign(acct, nil, "skip", time.Now())
			f.exec(`UPDATE campaigns SET kind = 'messages', status = 'sending' WHERE id = $1`, c)
			sub := f.subscribers(acct, "m", 1, "confirmed")
			due := time.Now().Add(20 * time.Second)
			testfactory.New(pool).Send(t, acct, c, sub, testfactory.Send{Email: "m1@example.com", JobID: "message:x",
				NextAttemptAt: &due})
			e := newExecutor(t, pool, newFake(true), Config{ClockSkew: skew})
			ctx := context.Background()
			d := e.newDealer()
			require.NoError(t, e.refresh(ctx, d))
			s := d.byID[c]
			require.NotNil(t, s)
			s.wake = streamWake{quiet: true}
			require.NoError(t, e.wakeStreams(ctx, d))
			in := s.wake.wakeAt.Sub(e.clk.Now())
			require.InDelta(t, 20*time.Second, in, float64(2*time.Second),
				"the stream would wake %s from now for a message due in 20 s", in)
			f.exec(`DELETE FROM sends WHERE campaign_id = $1`, c)
		})
	}
}
