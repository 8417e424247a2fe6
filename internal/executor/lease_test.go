package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
)

// TestNoSendStartsOnAnExpiredLease: a worker picks up its job only after the lease
// ran out (16 workers waiting for 4 SMTP connections). Meanwhile the rescuer
// settled the row — unknown under skip, requeued and sent by B under retry. The
// late worker must not hand the message over: under skip that would deliver a row
// reported unknown, under retry deliver it twice. Its row goes back uncharged.
func TestNoSendStartsOnAnExpiredLease(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{"skip", "retry"} {
		t.Run(policy, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			p := newFake(false)
			f, e, c := started(t, 1, policy, p, clk)
			ctx := context.Background()
			a, err := e.claim(ctx, c, 1)
			require.NoError(t, err)
			require.Len(t, a, 1)
			clk.Add(61 * time.Second)
			_, err = e.rescue(ctx)
			require.NoError(t, err)
			var results []result
			if policy == "retry" {
				b, err := e.claim(ctx, c, 1)
				require.NoError(t, err)
				require.Len(t, b, 1)
				results = append(results, e.send(ctx, job{campaign: c, row: b[0]}))
			}
			late := e.send(ctx, job{campaign: c, row: a[0]})
			require.Equal(t, statusRelease, late.status)
			e.flush(append(results, late))
			// Under skip the release returns the never-sent row to the queue.
			if rows, err := e.claim(ctx, c, 1); err == nil && len(rows) == 1 {
				e.flush([]result{e.send(ctx, job{campaign: c, row: rows[0]})})
			}
			_, accepted, _ := p.snapshot()
			require.Equal(t, 1, accepted[a[0].JobID])
			require.Equal(t, "sent", readSend(t, f.pool, a[0].ID).Status)
		})
	}
}

// TestSendNeedsAThirdOfItsLease: with less than a third of the lease left (60s
// lease, 40s gone), a send does not start; the row is queued again with its attempt
// uncharged and no retry delay.
func TestSendNeedsAThirdOfItsLease(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(false)
	f, e, c := started(t, 1, "skip", p, clk)
	ctx := context.Background()
	rows, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	clk.Add(40 * time.Second)
	res := e.send(ctx, job{campaign: c, row: rows[0]})
	require.Equal(t, statusRelease, res.status)
	e.flush([]result{res})
	calls, _, _ := p.snapshot()
	require.Zero(t, calls[rows[0].JobID], "the provider never saw it")
	got := readSend(t, f.pool, rows[0].ID)
	require.Equal(t, "queued", got.Status)
	require.Equal(t, 0, got.Attempts)
	again, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, again, 1, "claimable at once")
}

// slotWaiter is a provider whose connections are all busy: Send waits for one until
// its context ends and then fails temporarily, as the SMTP provider does.
type slotWaiter struct{ deadline chan time.Time }

func (s slotWaiter) Idempotent() bool { return false }

func (s slotWaiter) Send(ctx context.Context, _ provider.Message) (string, error) {
	d, _ := ctx.Deadline()
	s.deadline <- d
	<-ctx.Done()
	return "", &provider.Error{Class: provider.Temporary, Err: ctx.Err()}
}

// TestWaitForTheProviderEndsBeforeTheLease: the provider call runs under a context
// that ends a third of the lease before the lease does, so a worker stuck waiting
// for an SMTP connection gives up in time and hands the row back uncharged.
func TestWaitForTheProviderEndsBeforeTheLease(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := slotWaiter{deadline: make(chan time.Time, 1)}
	f, e, c := started(t, 1, "retry", p, clk)
	ctx := context.Background()
	rows, err := e.claim(ctx, c, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	clk.Add(40*time.Second - 50*time.Millisecond) // 50ms before the send deadline
	before := time.Now()
	res := e.send(ctx, job{campaign: c, row: rows[0]})
	d := <-p.deadline
	require.False(t, d.Before(before.Add(50*time.Millisecond)), "the deadline is the lease's, %v", d.Sub(before))
	require.True(t, d.Before(before.Add(10*time.Second)), "the provider call has a deadline well before the lease's end, %v", d.Sub(before))
	require.Equal(t, statusRelease, res.status)
	e.flush([]result{res})
	got := readSend(t, f.pool, rows[0].ID)
	require.Equal(t, "queued", got.Status)
	require.Equal(t, 0, got.Attempts, "waiting for a connection is not an attempt")
}

// TestLeaseIsDatedOnTheProcessClock: the dispatcher dates a job's lease from its own
// clock read before the claim statement, not from the database's lease_until, so
// a database clock running ahead of ours cannot stretch the time a worker thinks
// it has. Here the claim is dated 50s back: the database says 60s are left, the
// process knows only 10s are, less than a third of the lease.
func TestLeaseIsDatedOnTheProcessClock(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(true)
	_, e, c := started(t, 1, "skip", p, clk)
	rows, err := e.claim(context.Background(), c, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.True(t, rows[0].LeaseUntil.Equal(clk.Now().Add(time.Minute)))
	require.Equal(t, 1, e.handOutWith(c, e.routeOf(c), rows, clk.Now().Add(-50*time.Second), nil))
	j := <-e.jobs
	require.True(t, j.leaseEnd.Equal(clk.Now().Add(10*time.Second)))
	require.Equal(t, statusRelease, e.send(context.Background(), j).status)
	calls, _, _ := p.snapshot()
	require.Empty(t, calls)
}
