package executor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
)

// TestPrefetchDepthByRoute: a campaign sent through a provider that deduplicates,
// or under ambiguous_policy=retry, keeps two batches claimed ahead of the workers.
// Under skip through a provider that cannot deduplicate (smtp) every leased row a
// crash leaves behind becomes unknown, never sent, so such a campaign claims only
// as many rows as there are workers free to start them at once, unless the
// operator opted into the queue (PrefetchNonIdempotent).
func TestPrefetchDepthByRoute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		policy     string
		idempotent bool
		optIn      bool
		want       int // rows queued ahead of 4 idle workers, batches of 4
	}{
		{"skip", true, false, 8},
		{"retry", false, false, 8},
		{"skip", false, false, 4},
		{"skip", false, true, 8},
	} {
		t.Run(fmt.Sprintf("%s/idempotent=%v/optin=%v", tc.policy, tc.idempotent, tc.optIn), func(t *testing.T) {
			t.Parallel()
			pool := dbtest.New(t)
			f := fixture{t, pool}
			acct := f.account("a")
			f.subscribers(acct, "r", 30, "confirmed")
			c := f.campaign(acct, nil, tc.policy, time.Now().Add(-time.Minute))
			e := newExecutor(t, pool, newFake(tc.idempotent), Config{Tick: time.Hour, Workers: 4, BatchSize: 4,
				PrefetchNonIdempotent: tc.optIn})
			_, err := e.startDue(context.Background())
			require.NoError(t, err)
			var taken []job
			t.Cleanup(func() { settle(t, e, taken...) })
			ctx := context.Background()
			d := e.newDealer()
			for range 3 {
				_, err := dealSync(ctx, e, d)
				require.NoError(t, err)
			}
			require.Len(t, e.jobs, tc.want)
			require.Equal(t, tc.want, f.counts(c)["sending"], "leased rows")
			if tc.want == 8 {
				return
			}
			// Two workers take a row each: the two left queued have a free worker each.
			for range 2 {
				j := <-e.jobs
				e.jobTaken()
				taken = append(taken, j)
			}
			_, err = dealSync(ctx, e, d)
			require.NoError(t, err)
			require.Len(t, e.jobs, 2, "no worker is free for another row")
			// One of them finishes: one row more.
			e.jobDone()
			_, err = dealSync(ctx, e, d)
			require.NoError(t, err)
			require.Len(t, e.jobs, 3, "one worker freed, one row claimed")
			require.Equal(t, 5, f.counts(c)["sending"], "two taken (one done, not yet acknowledged), three queued")
		})
	}
}
