package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/store"
)

// sendingCampaignWith makes a sending campaign of key's account with n send rows to
// the account's subscribers, made user<i>@example.com (i from 1 to n) if missing,
// every third one sent; returns its id.
func sendingCampaignWith(t *testing.T, e *env, key string, n int) int64 {
	t.Helper()
	ctx := context.Background()
	res := e.do(key, http.MethodPost, "/v1/campaigns", map[string]any{"name": "big", "subject": "Hi",
		"from_email": "news@example.com", "text_template": "Hello"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	c := decodeAs[api.Campaign](t, res)
	_, err := e.pool.Exec(ctx, `UPDATE campaigns SET status = 'sending', started_at = now() WHERE id = $1`, c.Id)
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `INSERT INTO subscribers (account_id, email, email_lower, status)
		SELECT c.account_id, 'User'||g||'@Example.com', 'user'||g||'@example.com', 'confirmed'
		FROM campaigns c, generate_series(1, $2::int) g WHERE c.id = $1
		ON CONFLICT DO NOTHING`, c.Id, n)
	require.NoError(t, err)
	_, err = e.pool.Exec(ctx, `INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, sent_at)
		SELECT $1::bigint, s.account_id, s.id, s.email, s.email_lower, 'campaign:'||$1::bigint||':'||s.id,
		       CASE WHEN s.id % 3 = 0 THEN 'sent' ELSE 'queued' END, CASE WHEN s.id % 3 = 0 THEN now() END
		FROM subscribers s WHERE s.account_id = (SELECT account_id FROM campaigns WHERE id = $1::bigint)`, c.Id)
	require.NoError(t, err)
	return c.Id
}

// TestCampaignSendsByEmail: ?email= finds a campaign's send to one address
// (exact, any case), with the status filter or without; another address, a
// substring or a LIKE pattern finds nothing; anything that is not one address is
// a 422 naming /email; a bad status a 422 naming /status; another account's
// campaign is a 404, and its own send to the same address is never listed.
func TestCampaignSendsByEmail(t *testing.T) {
	t.Parallel()
	e := setup(t)
	cB := sendingCampaignWith(t, e, e.keyB, 5) // B first: ids differ from A's
	cA := sendingCampaignWith(t, e, e.keyA, 30)
	list := func(key string, c int64, query string) response {
		return e.do(key, http.MethodGet, fmt.Sprintf("/v1/campaigns/%d/sends?%s", c, query), nil)
	}

	for _, addr := range []string{"user7@example.com", "USER7@EXAMPLE.COM", "User7@Example.com"} {
		res := list(e.keyA, cA, "email="+url.QueryEscape(addr))
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		page := decodeAs[api.SendPage](t, res)
		require.Len(t, page.Data, 1, addr)
		require.Equal(t, "User7@Example.com", page.Data[0].Email)
		require.Nil(t, page.NextCursor)
	}
	var sentAddr string
	for _, s := range decodeAs[api.SendPage](t, list(e.keyA, cA, "status=sent&limit=1")).Data {
		sentAddr = s.Email
	}
	require.Len(t, decodeAs[api.SendPage](t, list(e.keyA, cA, "status=sent&email="+url.QueryEscape(sentAddr))).Data, 1)
	require.Empty(t, decodeAs[api.SendPage](t, list(e.keyA, cA, "status=failed&email="+url.QueryEscape(sentAddr))).Data)
	for _, miss := range []string{"user7@example.co", "ser7@example.com", "user7@example.com.evil", "nobody@example.com",
		"user%@example.com", "user_@example.com", "%@example.com"} { // LIKE patterns are plain characters here
		require.Empty(t, decodeAs[api.SendPage](t, list(e.keyA, cA, "email="+url.QueryEscape(miss))).Data, miss)
	}

	// B's campaign has a user1@example.com too: A never sees B's row, and B's
	// campaign id is a 404 to A, with or without the filter.
	require.Len(t, decodeAs[api.SendPage](t, list(e.keyB, cB, "email=user1%40example.com")).Data, 1)
	for _, q := range []string{"email=user1%40example.com", ""} {
		res := list(e.keyA, cB, q)
		require.Equal(t, http.StatusNotFound, res.Status, q)
	}
	require.Equal(t, http.StatusNotFound, list(e.keyA, 999999, "email=user1%40example.com").Status)

	for _, hostile := range []string{"email=", "email=%25",
		"email=user7", "email=%00user7%40example.com", "email=user7%40example.com%00", "email=%ff%fe%40example.com",
		"email=Ada+%3Cada%40example.com%3E", "email=a%40example.com%2Cb%40example.com", "email=" + strings.Repeat("a", 250) + "%40example.com",
		"email=user7%40example.com&email=user8%40example.com"} {
		res := list(e.keyA, cA, hostile)
		if hostile == "email=user7%40example.com&email=user8%40example.com" {
			// A repeated parameter takes the first, like every other filter.
			require.Equal(t, http.StatusOK, res.Status, hostile)
			continue
		}
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", hostile, res.Body)
		require.Contains(t, decodeAs[problem](t, res).pointers(), "/email", hostile)
	}
	res := list(e.keyA, cA, "status=delivered&email=user7%40example.com")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), "/status")
}

// TestSendListByEmailPlan: on a 50,000-recipient campaign among others, with fresh
// statistics, the address search reads the subscriber by its unique address and
// the send row by (campaign_id, subscriber_id): no scan of the campaign's rows.
func TestSendListByEmailPlan(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	sendingCampaignWith(t, e, e.keyB, 2000)
	c := sendingCampaignWith(t, e, e.keyA, 50000)
	_, err := e.pool.Exec(ctx, `ANALYZE subscribers; ANALYZE sends`)
	require.NoError(t, err)
	var acct int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT account_id FROM campaigns WHERE id = $1`, c).Scan(&acct))

	var captured string
	cfg := e.pool.Config()
	cfg.ConnConfig.Tracer = traceSQL(func(sql string) {
		if strings.Contains(sql, "JOIN sends") {
			captured = sql
		}
	})
	traced, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(traced.Close)
	rows, err := store.New(traced).SendListByEmail(ctx, store.SendListByEmailParams{CampaignID: c, AccountID: acct,
		EmailLower: "user49999@example.com", Lim: 51})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.NotEmpty(t, captured)
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		var plan []string
		err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode); err != nil {
				return err
			}
			// $1 campaign, $2 account, $3 email_lower, $4 after_id, $5 status, $6 lim
			r, err := tx.Query(ctx, "EXPLAIN "+captured, c, acct, "user49999@example.com", int64(0), nil, int32(51))
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
		t.Logf("%s plan:\n%s", mode, text)
		require.Regexp(t, `Index (Only )?Scan using \S+ on subscribers u .*\n\s+Index Cond: \(\(account_id = \S+ AND \(email_lower = `, text, mode)
		require.Contains(t, text, "sends_campaign_id_subscriber_id_key", mode)
		require.NotContains(t, text, "Seq Scan", mode)
		require.NotContains(t, text, "Bitmap", mode)
	}
}

// traceSQL hands every statement's text to fn.
type traceSQL func(sql string)

func (f traceSQL) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	f(d.SQL)
	return ctx
}

func (traceSQL) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
