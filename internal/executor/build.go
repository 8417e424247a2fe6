package executor

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/clock"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// buildWindow is how many of an account's subscribers one step of a build reads
// and inserts: small enough that each insert's transaction is short.
const buildWindow = 5000

// errBuildLost means the campaign stopped being this executor's build (cancelled,
// or taken over after this executor was declared dead).
var errBuildLost = errors.New("the campaign is no longer this executor's build")

// Built is what a campaign's build did: the send rows it queued, and whom it left
// out (suppressed addresses; of the rest, subscribers not confirmed).
type Built struct{ Rows, Suppressed, Unconfirmed int64 }

// StartCampaign starts one approved, due campaign with the scheduler's own steps
// (approved → building, the windowed build, building → sending with the
// campaign.started event), outside any executor: the build is owned by no
// executor id, as one begun before registration is. It exists so the bench times
// the build the product runs and tests get a sending campaign with its list the
// way production makes one. started is false when the campaign was not approved
// and due (now: nil means the database's now()), or stopped being this build
// (cancelled). A build error is returned as it is and leaves the campaign
// building; the scheduler would fail the campaign or take the build over.
func StartCampaign(ctx context.Context, pool *pgxpool.Pool, id int64, now *time.Time) (b Built, started bool, err error) {
	q := store.New(pool)
	c, err := q.CampaignBuildBegin(ctx, store.CampaignBuildBeginParams{ID: id, Now: now})
	if postgres.NoRows(err) {
		return b, false, nil
	}
	if err != nil {
		return b, false, err
	}
	var cfg Config
	cfg.defaults()
	b, err = buildList(ctx, pool, c, nil, clock.Clock{}, now, cfg.SegmentBuildTimeout)
	if errors.Is(err, errBuildLost) {
		return b, false, nil
	}
	if err != nil {
		return b, false, err
	}
	started, err = buildDone(ctx, q, c, nil, now, b)
	return b, started, err
}

// buildList queues a building campaign's recipients. The audience is read window by
// window in one read-only repeatable-read transaction (one snapshot, and no
// transaction id, so event readers do not wait for it, however long a segment's
// predicate runs); each window's confirmed, unsuppressed subscribers are inserted
// in a short transaction of their own (ON CONFLICT DO NOTHING: a build taken over
// after a crash inserts nothing twice). A segment's build is bounded by limit as a
// whole, on clk's pace: the bound is the server's statement_timeout, which no
// injected date moves.
func buildList(ctx context.Context, pool *pgxpool.Pool, c store.CampaignBuildBeginRow, owner *int64, clk clock.Clock,
	now *time.Time, limit time.Duration) (Built, error) {
	var b Built
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return b, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	q := store.New(pool)
	rq := q.WithTx(tx)
	p := store.CampaignAudiencePageParams{AccountID: c.AccountID, ListIds: c.ListIds}
	var deadline clock.Instant
	if c.SegmentID != nil {
		deadline = clk.Instant().Add(limit)
		if err := segmentFilter(ctx, rq, c.AccountID, *c.SegmentID, &p); err != nil {
			return b, err
		}
	}
	var ids []int64
	for {
		if !deadline.IsZero() {
			if err := boundBuild(ctx, rq, clk.Until(deadline)); err != nil {
				return b, err
			}
		}
		upto, err := rq.CampaignAudienceWindow(ctx, store.CampaignAudienceWindowParams{AccountID: c.AccountID,
			AfterID: p.AfterID, Lim: buildWindow})
		if err != nil || upto == 0 {
			return b, err
		}
		p.UptoID = upto
		rows, err := rq.CampaignAudiencePage(ctx, p)
		if err != nil {
			return b, err
		}
		ids = ids[:0]
		for _, r := range rows {
			switch {
			case r.Suppressed:
				b.Suppressed++
			case !r.Confirmed:
				b.Unconfirmed++
			default:
				ids = append(ids, r.ID)
			}
		}
		if len(ids) > 0 {
			r, err := q.CampaignBuildInsert(ctx, store.CampaignBuildInsertParams{CampaignID: c.ID,
				AccountID: c.AccountID, ExecutorID: owner, SubscriberIds: ids, Now: now})
			if err != nil {
				return b, err
			}
			if r.Owned == 0 {
				return b, errBuildLost
			}
			b.Rows += r.Inserted
		}
		p.AfterID = upto
	}
}

// buildDone moves a built campaign from building to sending, recording whom the
// build left out; false when it stopped being owner's build meanwhile.
func buildDone(ctx context.Context, q *store.Queries, c store.CampaignBuildBeginRow, owner *int64, now *time.Time,
	b Built) (bool, error) {
	_, err := q.CampaignBuildDone(ctx, store.CampaignBuildDoneParams{ID: c.ID, ExecutorID: owner, Now: now,
		SkippedSuppressed: b.Suppressed, SkippedUnconfirmed: b.Unconfirmed})
	if postgres.NoRows(err) {
		return false, nil
	}
	return err == nil, err
}
