package executor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// TestLeavingAListStopsARowThatWasInFlight: a recipient leaves the campaign's
// only list while their row is claimed (sending). The opt-out cannot stop a send
// already handed to the provider, but when the row comes back to queued (a
// release, a temporary failure, a rescue) it must not be sent: the next claim
// marks it suppressed, with a send.suppressed event whose reason is left_list.
func TestLeavingAListStopsARowThatWasInFlight(t *testing.T) {
	t.Parallel()
	for _, back := range []string{"release", "temporary failure", "rescue"} {
		t.Run(back, func(t *testing.T) {
			t.Parallel()
			pool := dbtest.New(t)
			f := fixture{t, pool}
			clk := newClock()
			f.account("other")
			acct := f.account("a")
			f.subscribers(acct, "s", 3, "confirmed")
			news := f.list(acct, "news")
			f.members(acct, news, "s")
			id := f.campaign(acct, []int64{news}, "retry", clk.Now())
			fake := newFake(true)
			fake.fail = func(provider.Message, int) error { return temporary("451 later") }
			e := newExecutor(t, pool, fake, Config{Now: clk.Now, Lease: time.Minute, MaxAttempts: 5,
				BackoffBase: time.Second, BackoffMax: time.Second, Workers: 10, BatchSize: 10})
			ctx := context.Background()
			_, err := e.startDue(ctx)
			require.NoError(t, err)
			c := sendingCampaign(t, e, id)
			rows, err := e.claim(ctx, c, 10)
			require.NoError(t, err)
			require.Len(t, rows, 3)

			// s2 leaves the list while every row is in flight.
			leaver := f.int64(`SELECT id FROM subscribers WHERE account_id = $1 AND email_lower = 's2@example.com'`, acct)
			f.exec(`UPDATE list_members SET status = 'unsubscribed' WHERE subscriber_id = $1`, leaver)
			_, err = store.New(pool).SendSuppressLeftLists(ctx, store.SendSuppressLeftListsParams{AccountID: acct, SubscriberIds: []int64{leaver}})
			require.NoError(t, err)

			switch back {
			case "release":
				var refs []claimRef
				for _, r := range rows {
					refs = append(refs, claimRef{r.ID, r.Attempts})
				}
				_, err := e.release(ctx, refs)
				require.NoError(t, err)
			case "temporary failure":
				var res []result
				for _, r := range rows {
					res = append(res, e.send(ctx, job{campaign: c, row: r}))
				}
				e.flush(res)
			case "rescue":
				clk.Add(61 * time.Second)
				_, err := e.rescue(ctx)
				require.NoError(t, err)
			}
			clk.Add(time.Hour)
			fake.fail = nil
			again, err := e.claim(ctx, c, 10)
			require.NoError(t, err)
			byStatus := map[int64]string{}
			for _, r := range again {
				byStatus[r.SubscriberID] = r.Status
			}
			require.Equal(t, "suppressed", byStatus[leaver], "a row of someone who left the list was claimed for sending")
			var res []result
			for _, r := range again {
				if r.Status == "sending" {
					res = append(res, e.send(ctx, job{campaign: c, row: r}))
				}
			}
			e.flush(res)
			require.EqualValues(t, 1, f.int64(`SELECT count(*) FROM events WHERE type = 'send.suppressed'
				AND (data->>'subscriber_id')::bigint = $1 AND data->>'reason' = 'left_list'`, leaver))
			_, accepted, _ := fake.snapshot()
			require.NotContains(t, accepted, jobID(id, leaver))
		})
	}
}
