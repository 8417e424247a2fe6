// Package invariant is the one statement of sendonce's delivery invariants
// (DESIGN.md §3–§4), checked at the end of every executor test, of the tests that
// run the real service, and of `sendonce-harness chaos`:
//
//   - a finished campaign (sent, cancelled or failed) holds no queued or sending
//     row: nothing can leave work in a campaign nobody sends any more (a
//     cancelled or failed one's rows are closed or deleted in batches after its
//     transition, so this holds once they are);
//   - a campaign's rows by status add up to its recipient list (and to the number
//     of recipients expected, where the caller knows it);
//   - where the caller sees the provider's side: each job id reached a recipient
//     at most once, and every row recorded as sent did reach one;
//   - where the caller asks (KeptCounters): a campaign's kept status counters,
//     which its report reads, equal a full recount of its rows.
//
// The queries live in db/queries/harness/invariant.sql (package harnessstore: the
// product never runs them).
package invariant

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/sendonce/sendonce/internal/harnessstore"
)

// Options say what the caller knows beyond the database.
type Options struct {
	// Delivered counts, per job id, the messages that reached a recipient: a sink's
	// or a fake provider's view after any deduplication an idempotent provider
	// does. nil: no view of the provider, its two checks are skipped.
	Delivered map[string]int
	// AllowRepeats skips the at-most-once check, for a campaign whose
	// ambiguous_policy 'retry' accepted the risk of a second copy.
	AllowRepeats bool
	// Recipients, per campaign id, is the size its recipient list must have.
	Recipients map[int64]int64
	// KeptCounters also holds every campaign's kept status counters (what its
	// report and /stats read) equal to a full recount of its rows, live and
	// archived. Off for tests that set a row's status by hand, around the
	// statements that keep the counters.
	KeptCounters bool
}

// Check returns every violation found, joined, or nil.
func Check(ctx context.Context, db harnessstore.DBTX, o Options) error {
	q := harnessstore.New(db)
	rows, err := q.InvariantCampaignCounts(ctx)
	if err != nil {
		return err
	}
	var errs []error
	seen := map[int64]bool{}
	for _, c := range rows {
		seen[c.ID] = true
		if (c.Status == "sent" || c.Status == "cancelled" || c.Status == "failed") && c.Queued+c.Sending > 0 {
			errs = append(errs, fmt.Errorf("campaign %d is %s but holds %d queued and %d sending rows",
				c.ID, c.Status, c.Queued, c.Sending))
		}
		if sum := c.Queued + c.Sending + c.Sent + c.Failed + c.Suppressed + c.Cancelled + c.Unknown; sum != c.Total {
			errs = append(errs, fmt.Errorf("campaign %d: rows by status add up to %d of %d", c.ID, sum, c.Total))
		}
		if want, ok := o.Recipients[c.ID]; ok && want != c.Total {
			errs = append(errs, fmt.Errorf("campaign %d has %d rows for %d recipients", c.ID, c.Total, want))
		}
	}
	for id, want := range o.Recipients {
		if !seen[id] && want != 0 {
			errs = append(errs, fmt.Errorf("campaign %d has no rows for %d recipients", id, want))
		}
	}
	if o.KeptCounters {
		diff, err := q.InvariantKeptCounts(ctx)
		if err != nil {
			return err
		}
		for _, d := range diff {
			errs = append(errs, fmt.Errorf("campaign %d keeps %d %s rows, its rows recount %d",
				d.ID, d.Kept, d.Status, d.Recounted))
		}
	}
	if o.Delivered != nil {
		if !o.AllowRepeats {
			var twice []string
			for job, n := range o.Delivered {
				if n > 1 {
					twice = append(twice, fmt.Sprintf("%s×%d", job, n))
				}
			}
			if len(twice) > 0 {
				sort.Strings(twice)
				errs = append(errs, fmt.Errorf("delivered more than once: %v", twice))
			}
		}
		sent, err := q.InvariantSentJobIDs(ctx)
		if err != nil {
			return err
		}
		var never []string
		for _, job := range sent {
			if o.Delivered[job] == 0 {
				never = append(never, job)
			}
		}
		if len(never) > 0 {
			errs = append(errs, fmt.Errorf("recorded sent but never delivered: %v", never))
		}
	}
	return errors.Join(errs...)
}

// Require fails t unless Check passes.
func Require(t testing.TB, db harnessstore.DBTX, o Options) {
	t.Helper()
	if err := Check(context.Background(), db, o); err != nil {
		t.Fatalf("delivery invariant violated:\n%v", err)
	}
}
