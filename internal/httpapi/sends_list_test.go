package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/store"
)

// mixStatuses gives campaign c's rows every status a send row can have, by id,
// in the proportions of a campaign half sent: most rows sent or still queued, a
// few waiting for a retry or in flight, a few of each other settled status. A
// listing merged from the status groups' indexes then has each group.
func mixStatuses(t *testing.T, e *env, c int64) {
	t.Helper()
	_, err := e.pool.Exec(context.Background(), `UPDATE sends SET
		status = CASE WHEN id % 100 < 40 THEN 'queued' WHEN id % 100 = 40 THEN 'queued'
		              WHEN id % 100 IN (41, 42) THEN 'sending' WHEN id % 100 = 43 THEN 'failed'
		              WHEN id % 100 = 44 THEN 'suppressed' WHEN id % 100 = 45 THEN 'cancelled'
		              WHEN id % 100 = 46 THEN 'unknown' ELSE 'sent' END,
		next_attempt_at = CASE WHEN id % 100 = 40 THEN now() + (id % 7) * interval '1 minute' ELSE '-infinity' END,
		lease_until = CASE WHEN id % 100 IN (41, 42) THEN now() + interval '1 minute' END,
		attempts = CASE WHEN id % 100 IN (40, 41, 42) THEN 1 ELSE attempts END
		WHERE campaign_id = $1`, c)
	require.NoError(t, err)
}

// TestCampaignSendsListMerged: a campaign's sends, paged without a status and with
// each status, are exactly its rows in id order (every status group, queued rows
// waiting for a retry and rows in flight included), each once, never another
// campaign's or another account's, across cursor pages; and the statuses the
// listing has a branch for are all the statuses a send row can have.
func TestCampaignSendsListMerged(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	cB := sendingCampaignWith(t, e, e.keyB, 40)
	cA := sendingCampaignWith(t, e, e.keyA, 500)
	cA2 := sendingCampaignWith(t, e, e.keyA, 500) // the same subscribers, ids after cA's
	for _, c := range []int64{cB, cA, cA2} {
		mixStatuses(t, e, c)
	}

	want := func(status string) []int64 {
		r, err := e.pool.Query(ctx, `SELECT id FROM sends WHERE campaign_id = $1 AND ($2 = '' OR status = $2) ORDER BY id`, cA, status)
		require.NoError(t, err)
		ids, err := pgx.CollectRows(r, pgx.RowTo[int64])
		require.NoError(t, err)
		return ids
	}
	list := func(status string) ([]int64, []string) {
		var ids []int64
		var statuses []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 200)
			q := url.Values{"limit": {"7"}}
			if status != "" {
				q.Set("status", status)
			}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			res := e.do(e.keyA, http.MethodGet, "/v1/campaigns/"+strconv.FormatInt(cA, 10)+"/sends?"+q.Encode(), nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			page := decodeAs[api.SendPage](t, res)
			require.LessOrEqual(t, len(page.Data), 7)
			for _, s := range page.Data {
				ids = append(ids, s.Id)
				statuses = append(statuses, string(s.Status))
			}
			if page.NextCursor == nil {
				return ids, statuses
			}
			cursor = *page.NextCursor
		}
	}

	// The listing has one branch per status the CHECK of sends admits: a status
	// added there must get its branch in SendList (db/queries/campaigns.sql).
	var check string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'sends'::regclass AND conname = 'sends_status_check'`).Scan(&check))
	require.Equal(t, `CHECK ((status = ANY (ARRAY['queued'::text, 'sending'::text, 'sent'::text, 'failed'::text, `+
		`'suppressed'::text, 'cancelled'::text, 'unknown'::text])))`, check, "a send status without a branch in SendList")

	all, statuses := list("")
	require.Equal(t, want(""), all)
	seen := map[string]bool{}
	for _, s := range statuses {
		seen[s] = true
	}
	require.Len(t, seen, 7, "every status in the listing: %v", seen)
	for _, st := range []string{"queued", "sending", "sent", "failed", "suppressed", "cancelled", "unknown"} {
		ids, got := list(st)
		require.Equal(t, want(st), ids, st)
		require.NotEmpty(t, ids, st)
		for _, s := range got {
			require.Equal(t, st, s)
		}
	}
	res := e.do(e.keyA, http.MethodGet, "/v1/campaigns/"+strconv.FormatInt(cB, 10)+"/sends", nil)
	require.Equal(t, http.StatusNotFound, res.Status)
}

// TestSendListPlan: on a 20,000-recipient campaign among 100,000 rows of others, with fresh
// statistics, a campaign's sends listing (with a status or without, custom and
// generic plans) is a merge by id of index range scans of the partial indexes the
// send path keeps (sends_claim_idx, sends_lease_idx, sends_campaign_status_idx):
// no walk of the primary key filtering out the other campaigns' rows (7.7 s at
// 5,000,000 sends), no scan of the campaign's other statuses, no sequential scan.
func TestSendListPlan(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	// The same heap layout every run: an autovacuum landing between the fills and
	// the status updates (sooner or later under load) fills the free space map,
	// which moves where the updated rows go and so the correlations the plan is
	// costed with (once, under CI's load, the rows in flight were read with a
	// BitmapAnd over the campaign's key). This database is the test's own.
	for _, table := range []string{"subscribers", "sends"} {
		_, err := e.pool.Exec(ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = off)`)
		require.NoError(t, err)
	}
	for _, n := range []int{40000, 40000} {
		mixStatuses(t, e, sendingCampaignWith(t, e, e.keyB, n))
	}
	c := sendingCampaignWith(t, e, e.keyA, 20000)
	mixStatuses(t, e, c)
	mixStatuses(t, e, sendingCampaignWith(t, e, e.keyA, 20000))
	// Statistics the same every run: ANALYZE's sample covers every row (300 ×
	// the target ≥ the tables' rows), and VACUUM sets the visibility map, so an
	// autovacuum landing later (sooner or later under load) changes neither the
	// estimates nor the all-visible pages the index scans are costed with. A
	// sampled ANALYZE let the plan differ from run to run.
	conn, err := e.pool.Acquire(ctx)
	require.NoError(t, err)
	for _, sql := range []string{`SET default_statistics_target = 1000`, `VACUUM (ANALYZE) subscribers`,
		`VACUUM (ANALYZE) sends`, `RESET default_statistics_target`} {
		_, err = conn.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	conn.Release()
	var acct int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT account_id FROM campaigns WHERE id = $1`, c).Scan(&acct))

	var captured string
	cfg := e.pool.Config()
	cfg.ConnConfig.Tracer = traceSQL(func(sql string) {
		if strings.Contains(sql, "name: SendList :many") {
			captured = sql
		}
	})
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(traced.Close)
	rows, err := store.New(traced).SendList(ctx, store.SendListParams{CampaignID: c, AccountID: acct, Lim: 101})
	require.NoError(t, err)
	require.Len(t, rows, 101)
	require.NotEmpty(t, captured)
	failed, queued, sending := "failed", "queued", "sending"
	for _, status := range []*string{nil, &failed, &queued, &sending} {
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			var plan []string
			err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode); err != nil {
					return err
				}
				// $1 campaign, $2 after_id, $3 account, $4 status, $5 lim
				r, err := tx.Query(ctx, "EXPLAIN "+captured, c, int64(5000), acct, status, int32(101))
				if err != nil {
					return err
				}
				plan, err = pgx.CollectRows(r, pgx.RowTo[string])
				if err != nil {
					return err
				}
				return errors.New("rollback")
			})
			require.ErrorContains(t, err, "rollback")
			text := strings.Join(plan, "\n")
			what := mode
			if status != nil {
				what += " status=" + *status
			}
			t.Logf("%s plan:\n%s", what, text)
			if status == nil {
				require.Contains(t, text, "Merge Append", what)
				require.Regexp(t, `Index Scan using sends_claim_idx on sends .*\n\s+Index Cond: \(\(campaign_id = \S+\) AND \(next_attempt_at = '-infinity'`, text, what)
				require.Contains(t, text, "sends_lease_idx", what)
				for _, st := range []string{"sent", "failed", "suppressed", "cancelled", "unknown"} {
					require.Regexp(t, `Index Scan using sends_campaign_status_idx on sends \S+ .*\n\s+Index Cond: \(\(campaign_id = \S+\) AND \(status = '`+st+`'::text\) AND \(id > `, text, what)
				}
			}
			if status != nil {
				require.Contains(t, text, map[string]string{"failed": "sends_campaign_status_idx", "queued": "sends_claim_idx",
					"sending": "sends_lease_idx"}[*status], what)
			}
			require.NotContains(t, text, "sends_pkey", what)
			require.NotContains(t, text, "sends_campaign_id_subscriber_id_key", what)
			require.NotContains(t, text, "Seq Scan", what)
			require.NotContains(t, text, "Bitmap", what)
		}
	}
}
