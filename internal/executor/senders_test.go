package executor

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// routes is a Senders over fixed providers, recording what was reported.
type routes struct {
	mu       sync.Mutex
	byID     map[int64]Route
	reported map[int64]int
}

func (r *routes) Route(_ context.Context, _, id int64) (Route, error) { return r.byID[id], nil }

func (r *routes) Report(_ context.Context, _, id int64, _ string, _ error) {
	r.mu.Lock()
	r.reported[id]++
	r.mu.Unlock()
}

// TestSendersRouteAndRate: a campaign pinned to a sender sends through that
// sender's provider (the executor's sees nothing of it), its claims follow the
// sender's rate budget on the executor's clock, and each outcome is reported.
func TestSendersRouteAndRate(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	clk := newClock()
	a, b := f.account("a"), f.account("b")
	f.subscribers(a, "a", 40, "confirmed")
	f.subscribers(b, "b", 40, "confirmed")
	senderA := testfactory.New(pool).Sender(t, a, "a", "postmark", true)
	ca := f.campaign(a, nil, "skip", clk.Now().Add(-time.Minute))
	cb := f.campaign(b, nil, "skip", clk.Now().Add(-time.Minute))
	own, viaSender := newFake(true), newFake(false)
	r := &routes{byID: map[int64]Route{senderA: {Provider: viaSender, RatePerSecond: 100}}, reported: map[int64]int{}}
	e, err := New(pool, own, Config{Workers: 100, BatchSize: 10, Now: clk.Now, Senders: r}, nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() { // what either provider delivered
		delivered := own.delivered()
		for k, v := range viaSender.delivered() {
			delivered[k] += v
		}
		invariant.Require(t, pool, invariant.Options{Delivered: delivered})
	})
	_, err = e.startDue(context.Background())
	require.NoError(t, err)
	var taken []job // the jobs the test's "workers" took from the prefetch queue
	t.Cleanup(func() { settle(t, e, taken...) })
	// The start pinned A's campaign to A's default sender; B has none.
	require.Equal(t, senderA, f.int64(`SELECT sender_id FROM campaigns WHERE id = $1`, ca))
	require.Zero(t, f.int64(`SELECT count(*) FROM campaigns WHERE id = $1 AND sender_id IS NOT NULL`, cb))

	ctx := context.Background()
	d := e.newDealer()
	for range 4 {
		_, err := dealSync(ctx, e, d)
		require.NoError(t, err)
		taken = append(taken, takeJobs(e)...)
	}
	// A's sender holds 20 tokens (two claims of 10) and the clock stands still: A
	// got 20 rows; B, with no sender limit, the rest of the claims.
	leased := func(c int64) int64 {
		return f.int64(`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'sending'`, c)
	}
	require.EqualValues(t, 20, leased(ca))
	wait, err := dealSync(ctx, e, d)
	require.NoError(t, err)
	taken = append(taken, takeJobs(e)...)
	require.EqualValues(t, 20, leased(ca), "no budget left for A's sender")
	require.LessOrEqual(t, wait, 100*time.Millisecond)
	clk.Add(100 * time.Millisecond) // 10 tokens at 100/s
	for range 3 {
		_, err := dealSync(ctx, e, d)
		require.NoError(t, err)
		taken = append(taken, takeJobs(e)...)
	}
	require.EqualValues(t, 30, leased(ca))

	settle(t, e, taken...)
	taken = nil
	_, viaCalls, _ := viaSender.snapshot()
	_, ownCalls, _ := own.snapshot()
	for id := range viaCalls {
		require.Regexp(t, `^campaign:`+strconv.FormatInt(ca, 10)+`:`, id)
	}
	for id := range ownCalls {
		require.Regexp(t, `^campaign:`+strconv.FormatInt(cb, 10)+`:`, id)
	}
	require.Len(t, viaCalls, 30)
	r.mu.Lock()
	require.Equal(t, map[int64]int{senderA: 30}, r.reported)
	r.mu.Unlock()
}
