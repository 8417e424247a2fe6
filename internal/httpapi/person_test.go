package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/export"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// NDJSON exports are checked against openapi.yaml as text, like CSV.
func init() {
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
}

// The person routes answer another account's subscriber (and one that does not
// exist) with 404, and change nothing of it.
func TestPersonRoutesTenantIsolation(t *testing.T) {
	t.Parallel()
	e := setup(t)
	sub := decodeAs[api.Subscriber](t, e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "ada@example.com"}))
	for _, r := range []struct{ method, path string }{
		{"GET", "/v1/subscribers/%d/activity"}, {"GET", "/v1/subscribers/%d/export"}, {"POST", "/v1/subscribers/%d/erase"},
	} {
		for _, id := range []int64{sub.Id, sub.Id + 1000} {
			res := e.do(e.keyB, r.method, fmt.Sprintf(r.path, id), nil)
			require.Equal(t, http.StatusNotFound, res.Status, "%s %s: %s", r.method, r.path, res.Body)
		}
		res := e.do(e.keyA, r.method, fmt.Sprintf(r.path, 0), nil)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	}
	require.Equal(t, http.StatusOK, e.do(e.keyA, "GET", fmt.Sprintf("/v1/subscribers/%d", sub.Id), nil).Status)
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM suppressions`).Scan(&n))
	require.Zero(t, n, "a refused erasure suppresses nothing")
}

// The activity pages newest first through sends, opens and clicks (with the
// scanner flag), messages, opt-out events and the suppression; the export holds
// the profile, the consents and the same activity.
func TestSubscriberActivityAndExport(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	sub := decodeAs[api.Subscriber](t, e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{
		"email": "Ada@Example.com", "name": "Ada", "status": "confirmed", "attributes": map[string]any{"plan": "pro"}}))
	list := decodeAs[api.List](t, e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "News"}))
	require.Equal(t, http.StatusOK, e.do(e.keyA, "POST", fmt.Sprintf("/v1/lists/%d/members", list.Id),
		map[string]any{"subscriber_ids": []int64{sub.Id}}).Status)
	var acct, campaign, send int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT account_id FROM subscribers WHERE id = $1`, sub.Id).Scan(&acct))
	f := testfactory.New(e.pool)
	campaign = f.Campaign(t, acct, testfactory.Campaign{Name: "Sale", FromEmail: "news@example.com"})
	now := time.Now()
	sentAt := now.Add(-3 * time.Hour)
	send = f.Send(t, acct, campaign, sub.Id, testfactory.Send{Email: "Ada@Example.com", Status: "sent", SentAt: &sentAt})
	f.TrackingHit(t, acct, campaign, send, testfactory.TrackingHit{Kind: "open", At: now.Add(-2 * time.Hour), SuspectedBot: true})
	f.TrackingHit(t, acct, campaign, send, testfactory.TrackingHit{Kind: "click", Link: 1, At: now.Add(-time.Hour)})
	require.Less(t, e.do(e.keyA, "POST", "/v1/messages", map[string]any{"to": "ada@example.com", "from": "shop@example.com",
		"subject": "Receipt", "text": "Thanks"}, "Idempotency-Key", "r-1").Status, 300)
	require.Less(t, e.do(e.keyA, "POST", "/v1/suppressions", map[string]any{"email": "ada@example.com"}).Status, 300)

	var kinds []string
	path := fmt.Sprintf("/v1/subscribers/%d/activity?limit=2", sub.Id)
	var prev string
	for range 10 {
		res := e.do(e.keyA, "GET", path, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		page := decodeAs[api.ActivityPage](t, res)
		for _, it := range page.Data {
			at := it.At.UTC().Format("2006-01-02T15:04:05.000000")
			require.True(t, prev == "" || at <= prev, "newest first")
			prev = at
			kinds = append(kinds, it.Kind)
			switch it.Kind {
			case "open":
				require.Equal(t, true, it.Data["suspected_bot"])
			case "click":
				require.Equal(t, false, it.Data["suspected_bot"])
			case "send":
				require.Equal(t, "sent", it.Data["status"])
			}
		}
		if page.NextCursor == nil {
			break
		}
		path = fmt.Sprintf("/v1/subscribers/%d/activity?limit=2&cursor=%s", sub.Id, url.QueryEscape(*page.NextCursor))
	}
	for _, k := range []string{"send", "open", "click", "message", "suppression.created", "suppression"} {
		require.Contains(t, kinds, k)
	}
	require.Len(t, kinds, 6, "%v", kinds)

	res := e.do(e.keyA, "GET", fmt.Sprintf("/v1/subscribers/%d/export", sub.Id), nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Contains(t, res.Header.Get("Content-Disposition"), fmt.Sprintf("subscriber-%d.json", sub.Id))
	x := decodeAs[api.PersonExport](t, res)
	require.NotNil(t, x.Profile)
	require.Equal(t, "pro", x.Profile.Attributes["plan"])
	require.Len(t, x.Consents, 1)
	require.Equal(t, "News", x.Consents[0].ListName)
	require.Len(t, x.Activity, 6)
}

// The preference page offers "email me my data" and "delete my data". The export
// is mailed to the address, never shown on the page. Deleting asks first; only
// the confirming POST erases.
func TestPreferencePageExportAndErase(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	resp, err := noRedirect.Get(e.link())
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(page), `id="erase"`)
	require.Contains(t, string(page), `id="export"`)

	post := func(action string) (int, string) {
		resp, body := oneClickPost(t, e.link(), "application/x-www-form-urlencoded", strings.NewReader("action="+action))
		return resp.StatusCode, body
	}
	status, body := post("export")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="export-sent"`)
	require.NotContains(t, strings.ToLower(body), "ada@example.com", "the data is mailed, not shown")
	var to, file string
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT m.to_email, convert_from(b.content, 'UTF8') FROM messages m
		JOIN message_attachments a ON a.message_id = m.id JOIN attachment_blobs b ON b.account_id = a.account_id AND b.sha256 = a.sha256
		WHERE m.account_id = $1`, e.accountID).Scan(&to, &file))
	require.Equal(t, "ada@example.com", strings.ToLower(to))
	require.Contains(t, file, `"email": "Ada@Example.com"`, "the export is attached")

	status, body = post("erase-ask")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="erase-confirm"`)
	var n int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM subscribers WHERE id = $1`, e.subscriberID).Scan(&n))
	require.Equal(t, 1, n, "asking erases nothing")

	status, body = post("erase")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="erased"`)
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM subscribers WHERE id = $1`, e.subscriberID).Scan(&n))
	require.Zero(t, n)
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM sends WHERE email_lower = 'ada@example.com'`).Scan(&n))
	require.Zero(t, n)
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM messages WHERE lower(to_email) = 'ada@example.com'`).Scan(&n))
	require.Zero(t, n, "the mailed export went too")
	var reason, requestedBy string
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT reason FROM suppressions WHERE account_id = $1`, e.accountID).Scan(&reason))
	require.Equal(t, "erasure", reason)
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT requested_by FROM erasures WHERE account_id = $1`, e.accountID).Scan(&requestedBy))
	require.Equal(t, "self-service", requestedBy)
}

// Exports stream the account's own rows only (another account's campaign is
// 404), CSV by default or NDJSON by Accept or ?format=, across batches; a bad
// format is 422 naming it.
func TestExportsStreamAndIsolate(t *testing.T) {
	t.Parallel()
	e := setupDeps(t, func(d *httpapi.Deps) {
		d.Exports = export.NewService(d.Pool)
		d.Exports.Batch = 2
	})
	for _, x := range []string{"a1@example.com", "a2@example.com", "a3@example.com"} {
		e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": x, "name": "=cmd|' /C calc'!A0"})
	}
	e.do(e.keyB, "POST", "/v1/subscribers", map[string]any{"email": "b1@example.com"})
	res := e.do(e.keyA, "GET", "/v1/subscribers/export", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, "text/csv; charset=utf-8", res.Header.Get("Content-Type"))
	lines := strings.Split(strings.TrimSuffix(string(res.Body), "\r\n"), "\r\n")
	require.Len(t, lines, 4, "%q", res.Body)
	require.True(t, strings.HasPrefix(lines[0], "id,email,name,status"))
	require.Contains(t, lines[1], ",a1@example.com,'=cmd|' /C calc'!A0,")
	require.NotContains(t, string(res.Body), "b1@example.com")

	res = e.do(e.keyA, "GET", "/v1/subscribers/export?email=a2", nil, "Accept", "application/x-ndjson")
	require.Equal(t, "application/x-ndjson", res.Header.Get("Content-Type"))
	var row map[string]any
	require.NoError(t, json.Unmarshal(bytes.TrimSpace(res.Body), &row))
	require.Equal(t, "a2@example.com", row["email"])
	require.Equal(t, "=cmd|' /C calc'!A0", row["name"], "NDJSON is data, not a spreadsheet")

	res = e.do(e.keyA, "GET", "/v1/subscribers/export?format=xml", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	var acctB int64
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT account_id FROM subscribers WHERE email = 'b1@example.com'`).Scan(&acctB))
	campaign := testfactory.New(e.pool).Campaign(t, acctB, testfactory.Campaign{FromEmail: "n@example.com"})
	require.Equal(t, http.StatusNotFound, e.do(e.keyA, "GET", fmt.Sprintf("/v1/campaigns/%d/recipients/export", campaign), nil).Status)
	require.Equal(t, http.StatusOK, e.do(e.keyB, "GET", fmt.Sprintf("/v1/campaigns/%d/recipients/export", campaign), nil).Status)
	for _, p := range []string{"/v1/suppressions/export", "/v1/messages/export", "/v1/events/export?format=ndjson"} {
		require.Equal(t, http.StatusOK, e.do(e.keyA, "GET", p, nil).Status, p)
	}
}

// An erased address that comes back is suppressed again by address, whichever way
// it comes (a create, an import, a marketing message), also after the key ring
// rotated (the hash was made under the key that is now second); and an erasure
// waits for a send in flight (409, Retry-After) with the person's mail stopped.
func TestErasedAddressSuppressedWhenItComesBack(t *testing.T) {
	t.Parallel()
	var pool *pgxpool.Pool
	secrets := []string{"k1:first-secret-0123456789abcdef"}
	e := setupDeps(t, func(d *httpapi.Deps) { pool = d.Pool }, func(c *config.Config) { c.UnsubscribeSecret = secrets })
	ctx := context.Background()
	suppressed := func(string) string {
		var reason string
		_ = pool.QueryRow(ctx, `SELECT reason FROM suppressions WHERE email_lower = 'ada@example.com'`).Scan(&reason)
		return reason
	}
	create := func() int64 {
		return decodeAs[api.Subscriber](t, e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "Ada@Example.com", "status": "confirmed"})).Id
	}
	id := create()
	var acct int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT account_id FROM subscribers WHERE id = $1`, id).Scan(&acct))
	f := testfactory.New(pool)
	campaign := f.Campaign(t, acct, testfactory.Campaign{FromEmail: "n@example.com"})
	lease := time.Now().Add(time.Minute)
	f.Send(t, acct, campaign, id, testfactory.Send{Email: "Ada@Example.com", Status: "sending", LeaseUntil: &lease})
	res := e.do(e.keyA, "POST", fmt.Sprintf("/v1/subscribers/%d/erase", id), nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	require.Equal(t, "60", res.Header.Get("Retry-After"))
	var status string
	require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM subscribers WHERE id = $1`, id).Scan(&status))
	require.Equal(t, "unsubscribed", status, "nothing new is sent while the erasure waits")
	_, err := pool.Exec(ctx, `UPDATE sends SET status = 'sent', lease_until = NULL WHERE subscriber_id = $1`, id)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, e.do(e.keyA, "POST", fmt.Sprintf("/v1/subscribers/%d/erase", id), nil).Status)
	require.Empty(t, suppressed(""), "only the hash is kept")

	id = create()
	require.Equal(t, "erasure", suppressed(""), "created again: suppressed")
	require.Equal(t, http.StatusOK, e.do(e.keyA, "POST", fmt.Sprintf("/v1/subscribers/%d/erase", id), nil).Status)
	require.Empty(t, suppressed(""))
	require.Equal(t, http.StatusOK, e.do(e.keyA, "POST", "/v1/subscribers/import", `[{"email":"ADA@example.com"}]`).Status)
	require.Equal(t, "erasure", suppressed(""), "imported again: suppressed")
	var sub int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM subscribers WHERE email_lower = 'ada@example.com'`).Scan(&sub))
	require.Equal(t, http.StatusOK, e.do(e.keyA, "POST", fmt.Sprintf("/v1/subscribers/%d/erase", sub), nil).Status)

	// The ring rotated: a new signing key first, the old one still verifying.
	secrets = []string{"k2:second-secret-0123456789abcdef", "k1:first-secret-0123456789abcdef"}
	cfg2 := config.Default()
	cfg2.UnsubscribeSecret = secrets
	e2 := &env{t: t, pool: pool, handler: httpapitest.New(t, pool, cfg2), keyA: e.keyA, keyB: e.keyB}
	require.Less(t, e2.do(e.keyA, "POST", "/v1/messages", map[string]any{"to": "ada@example.com", "from": "shop@example.com",
		"subject": "News", "text": "Hi", "category": "marketing"}, "Idempotency-Key", "m-1").Status, 300)
	require.Equal(t, "erasure", suppressed(""), "a marketing message to it, after a key rotation: suppressed")
	var hashes int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM suppressions WHERE email_lower LIKE 'erased:%'`).Scan(&hashes))
	require.Equal(t, 1, hashes)
}

// TestMessagesExportFilters: the messages export keeps what the messages list's
// filters keep (the dashboard's export buttons carry them): a tag, the whole
// address in any case, the send's status; another account's messages never.
func TestMessagesExportFilters(t *testing.T) {
	t.Parallel()
	e := setupDeps(t, func(d *httpapi.Deps) { d.Exports = export.NewService(d.Pool) })
	for i, m := range []map[string]any{
		receipt(nil),
		receipt(map[string]any{"to": "bob@example.com", "tags": []string{"welcome"}}),
		receipt(map[string]any{"to": "Ada@Example.com", "tags": []string{"welcome", "vip"}}),
	} {
		res := e.do(e.keyA, "POST", "/v1/messages", m, "Idempotency-Key", fmt.Sprintf("exp-%d", i))
		require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	}
	res := e.do(e.keyB, "POST", "/v1/messages", receipt(map[string]any{"tags": []string{"welcome"}}), "Idempotency-Key", "exp-b")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	rows := func(q string) []string {
		res := e.do(e.keyA, "GET", "/v1/messages/export?format=ndjson"+q, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(string(res.Body)), "\n") {
			if l == "" {
				continue
			}
			var r map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &r))
			out = append(out, fmt.Sprintf("%v %v", r["to"], r["tags"]))
		}
		return out
	}
	require.Len(t, rows(""), 3)
	require.Equal(t, []string{"bob@example.com [welcome]", "Ada@example.com [welcome vip]"}, rows("&tag=welcome"))
	require.Equal(t, []string{"ada@example.com [receipt]", "Ada@example.com [welcome vip]"}, rows("&to=ADA@example.com"))
	require.Equal(t, []string{"Ada@example.com [welcome vip]"}, rows("&to=ada@example.com&tag=vip"))
	require.Len(t, rows("&status=queued"), 3)
	require.Empty(t, rows("&status=sent"))
}
