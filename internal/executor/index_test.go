package executor

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/store"
)

// indexesHolding lists the indexes of sends that hold an entry for row id as it is
// now: every index without a predicate, and every partial index whose predicate
// the row meets. A status change that is not a HOT update writes a new entry into
// exactly these, so the list is what each step of a send costs in index writes.
func indexesHolding(t *testing.T, pool *pgxpool.Pool, id int64) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := pool.Query(ctx, `SELECT i.relname, coalesce(pg_get_expr(x.indpred, x.indrelid), '')
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'sends'::regclass`)
	require.NoError(t, err)
	type index struct{ name, pred string }
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (index, error) {
		var i index
		return i, r.Scan(&i.name, &i.pred)
	})
	require.NoError(t, err)
	var held []string
	for _, i := range all {
		in := true
		if i.pred != "" {
			require.NoError(t, pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM sends WHERE id = $1 AND (`+i.pred+`))`, id).Scan(&in))
		}
		if in {
			held = append(held, i.name)
		}
	}
	sort.Strings(held)
	return held
}

// TestSendRowIndexWrites pins which indexes each step of a send writes. A claim
// and an acknowledgement each change status, so neither is a HOT update; what
// keeps them cheap is that the new row version enters few indexes: the build's
// queued row and the claim's sending row enter only the primary key, the
// (campaign_id, subscriber_id) key and their own partial index; the settled row
// adds the per-campaign listing index and the provider-id look-up. Before
// migration 00160 every version also entered the job_id index and the listing
// index (seven and six entries instead of three and four).
func TestSendRowIndexWrites(t *testing.T) {
	t.Parallel()
	clk := newClock()
	f, e, c := started(t, 1, "skip", newFake(true), clk)
	id := f.int64(`SELECT id FROM sends WHERE campaign_id = $1`, c.ID)
	keys := []string{"sends_campaign_id_subscriber_id_key", "sends_pkey"}
	with := func(extra ...string) []string {
		out := append(append([]string{}, keys...), extra...)
		sort.Strings(out)
		return out
	}
	require.Equal(t, with("sends_claim_idx"), indexesHolding(t, f.pool, id), "queued")

	rows, err := e.claim(context.Background(), c, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, with("sends_lease_idx"), indexesHolding(t, f.pool, id), "sending")

	e.flush([]result{e.send(context.Background(), job{campaign: c, row: rows[0]})})
	require.Equal(t, "sent", f.str(`SELECT status FROM sends WHERE id = $1`, id))
	require.Equal(t, with("sends_campaign_status_idx", "sends_provider_message_idx"), indexesHolding(t, f.pool, id), "sent")
}

func (f fixture) str(sql string, args ...any) string {
	f.t.Helper()
	var s string
	require.NoError(f.t, f.pool.QueryRow(context.Background(), sql, args...).Scan(&s))
	return s
}

// TestSendKeysHoldAcrossTable: with job_id indexed only outside the campaign form,
// a job id still names exactly one row, a recipient is still queued at most once
// per campaign, and a send row still belongs to an existing campaign, now of its
// own account.
func TestSendKeysHoldAcrossTable(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	ctx := context.Background()
	a, b := f.account("a"), f.account("b")
	sub := f.subscribers(a, "s", 2, "confirmed")
	c1 := f.campaign(a, nil, "skip", time.Now())
	c2 := f.campaign(a, nil, "skip", time.Now())
	cb := f.campaign(b, nil, "skip", time.Now())
	insert := func(campaign, account, subscriber int64, job string) error {
		_, err := pool.Exec(ctx, `INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id)
			VALUES ($1, $2, $3, 'x@example.com', 'x@example.com', $4)`, campaign, account, subscriber, job)
		return err
	}
	code := func(err error) string {
		var pg *pgconn.PgError
		if errors.As(err, &pg) {
			return pg.Code
		}
		return ""
	}
	require.NoError(t, insert(c1, a, sub, jobID(c1, sub)))
	require.NoError(t, insert(c1, a, 900001, "message:1:key"))

	// The same campaign job id twice is the same (campaign, subscriber) twice.
	require.Equal(t, "23505", code(insert(c1, a, sub, jobID(c1, sub))), "duplicate campaign job id")
	// A campaign-shaped job id must be the row's own.
	require.Equal(t, "23514", code(insert(c2, a, sub, jobID(c1, sub))), "another row's campaign job id")
	require.Equal(t, "23514", code(insert(c2, a, sub, "campaign:x")), "malformed campaign job id")
	// Any other job id is unique over the whole table, across campaigns.
	require.Equal(t, "23505", code(insert(c2, a, 900002, "message:1:key")), "duplicate message job id")
	// A send row's account is its campaign's.
	require.Equal(t, "23503", code(insert(cb, a, sub, jobID(cb, sub))), "send row of another account's campaign")
	require.Equal(t, "23503", code(insert(c1+1000, a, sub, jobID(c1+1000, sub))), "send row of no campaign")

	// Deleting the campaign deletes its rows; deleting the account, its campaigns' rows.
	require.NoError(t, insert(c2, a, sub, jobID(c2, sub)))
	f.exec(`DELETE FROM campaigns WHERE id = $1`, c1)
	require.Equal(t, int64(1), f.int64(`SELECT count(*) FROM sends`))
	f.exec(`DELETE FROM accounts WHERE id = $1`, a)
	require.Equal(t, int64(0), f.int64(`SELECT count(*) FROM sends`))
}

// TestSendLookupPlans: the statements that find send rows by job id or by status
// use an index on a table where a campaign is most of the rows, though job_id has
// no index for campaign rows and the listing index no queued or sending rows: a
// webhook's feedback by either kind of job id or by provider id, message
// retention's join by job id, a stream's retirement and the finish check of a
// campaign near its end.
func TestSendLookupPlans(t *testing.T) {
	t.Parallel()
	var captured string
	cfg, err := pgxpool.ParseConfig(dbtest.URL(t))
	require.NoError(t, err)
	cfg.ConnConfig.Tracer = captureNamed(func(sql string) { captured = sql })
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	f := fixture{t, pool}
	ctx := context.Background()
	q := store.New(pool)
	acct := f.account("a")
	f.subscribers(acct, "s", 20000, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now())
	f.start(c)
	// Near its end: all but a few rows sent, the finish check runs every few seconds.
	f.exec(`UPDATE sends SET status = 'sent', provider_message_id = 'p' || id
		WHERE id < (SELECT max(id) - 10 FROM sends)`)
	f.exec(`ANALYZE sends`)
	sub := f.int64(`SELECT min(subscriber_id) FROM sends`)

	str := func(s string) *string { return &s }
	campaignJob := jobID(c, sub)
	for name, p := range map[string]store.SendRecordFeedbackParams{
		"campaign job id": {JobID: &campaignJob},
		"message job id":  {JobID: str("message:1:k")},
		"provider id":     {ProviderMessageID: str("p2")},
	} {
		p.AccountID, p.Feedback = acct, str("complaint")
		n, err := q.SendRecordFeedback(ctx, p)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"campaign job id": 1, "message job id": 0, "provider id": 1}[name], n, name)
		require.Contains(t, captured, "-- name: SendRecordFeedback ")
		text := explain(t, pool, nil, captured, p.AccountID, p.JobID, p.ProviderMessageID, p.Feedback, p.Now)
		t.Logf("%s:\n%s", name, text)
		require.NotContains(t, text, "Seq Scan on sends", "%s:\n%s", name, text)
	}
	require.Equal(t, "complaint", f.str(`SELECT feedback FROM sends WHERE job_id = $1`, campaignJob))

	// Message retention joins messages to their send rows by job id, and retiring a
	// sender's stream checks it has nothing queued or in flight.
	_, err = q.MessageDeleteRetired(ctx, store.MessageDeleteRetiredParams{Cutoff: time.Now(), N: 100})
	require.NoError(t, err)
	require.Contains(t, captured, "-- name: MessageDeleteRetired ")
	text := explain(t, pool, nil, captured, time.Now(), int32(100)) // cutoff, n
	t.Logf("message retention:\n%s", text)
	require.Contains(t, text, "sends_job_id_key", "message retention:\n%s", text)
	require.NoError(t, q.SenderRetireStream(ctx, store.SenderRetireStreamParams{AccountID: acct, ID: &c}))
	require.Contains(t, captured, "-- name: SenderRetireStream ")
	text = explain(t, pool, nil, captured, acct, &c) // account, sender
	t.Logf("retire stream:\n%s", text)
	require.NotContains(t, text, "Seq Scan on sends", "retire stream:\n%s", text)

	_, err = q.CampaignFinish(ctx, store.CampaignFinishParams{Now: nil, CampaignID: c})
	require.ErrorIs(t, err, pgx.ErrNoRows, "rows are still queued")
	require.Contains(t, captured, "-- name: CampaignFinish ")
	text = explain(t, pool, nil, captured, nil, c) // now, campaign
	t.Logf("finish:\n%s", text)
	require.Contains(t, text, "sends_claim_idx", "finish:\n%s", text)
	require.Contains(t, text, "sends_lease_idx", "finish:\n%s", text)
	require.NotContains(t, text, "Seq Scan on sends", "finish:\n%s", text)
}

// captureNamed is a pgx tracer that hands fn the text of every sqlc statement
// (those that start with their "-- name:" line).
type captureNamed func(sql string)

func (c captureNamed) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(d.SQL, "-- name: ") {
		c(d.SQL)
	}
	return ctx
}

func (captureNamed) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
