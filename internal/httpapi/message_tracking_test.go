package httpapi_test

import (
	"context"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/tracking"
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// msgTrackEnv is a server whose tracker and message builder share one key ring,
// as cmd/sendonce wires them.
type msgTrackEnv struct {
	*env
	tokens  *tracking.Tokens
	svc     *tracking.Service
	builder transactional.Builder
}

func setupMessageTracking(t *testing.T) msgTrackEnv {
	t.Helper()
	keys, err := token.NewRing([]string{"k1:0123456789abcdef0123456789abcdef"})
	require.NoError(t, err)
	signer := unsubscribe.NewSigner(keys)
	tokens := tracking.NewTokens(keys, "https://mail.example.com")
	var svc *tracking.Service
	e := setupDeps(t, func(d *httpapi.Deps) {
		d.Unsubscribe = unsubscribe.NewService(d.Pool, signer)
		svc = tracking.New(d.Pool, tokens, tracking.Config{}, nil)
		d.Tracking = tracking.API{Service: svc}
	}, func(c *config.Config) { c.PublicURL = "https://mail.example.com" })
	b := transactional.Builder{Messages: render.NewRandomBuilder(),
		Tracking: func(accountID, streamID, sendID, messageID int64, links int, clicks, opens bool) (func(int) string, string) {
			return tokens.MessageLinks(tracking.Send{AccountID: accountID, CampaignID: streamID, SendID: sendID,
				MessageID: messageID}, links, clicks, opens)
		}}
	return msgTrackEnv{env: e, tokens: tokens, svc: svc, builder: b}
}

// claimAndBuild claims the queued message of id as the executor would and builds
// it with the tracking builder.
func (m msgTrackEnv) claimAndBuild(t *testing.T, id int64) (store.MessageClaimBatchRow, provider.Message) {
	t.Helper()
	ctx := context.Background()
	var stream int64
	require.NoError(t, m.pool.QueryRow(ctx, `SELECT s.campaign_id FROM sends s JOIN messages m
		ON s.job_id = 'message:' || m.account_id || ':' || m.idempotency_key WHERE m.id = $1`, id).Scan(&stream))
	rows, err := store.New(m.pool).MessageClaimBatch(ctx, store.MessageClaimBatchParams{CampaignID: stream, N: 10,
		ViaProvider: "test", Lease: pgtype.Interval{Microseconds: int64(time.Minute / time.Microsecond), Valid: true}})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, id, rows[0].SubscriberID)
	pm, err := m.builder.BuildMessage(rows[0])
	require.NoError(t, err)
	return rows[0], pm
}

var clickURL = regexp.MustCompile(`href="https://mail\.example\.com/c/([A-Za-z0-9_-]+)"`)

const trackedHTML = `<p>Hi {{.Name}}</p><a href="https://shop.example/order/A-1">Your order</a> ` +
	`<a href="https://shop.example/help">Help</a> <a href="https://x.example/?e={{.Email}}">personal</a>`

// TestMessageTrackClicks: a message accepted with track_clicks stores its literal
// links with it; the built message carries signed message click tokens whose
// redirect answers the stored URL and records a hit and a send.clicked event
// naming the message; GET /v1/messages/{id} counts it; a tampered token, another
// account's and a campaign token with the same ids are bare 404s; the open pixel
// records an open.
func TestMessageTrackClicks(t *testing.T) {
	t.Parallel()
	m := setupMessageTracking(t)
	ctx := context.Background()
	res := m.do(m.keyA, "POST", "/v1/messages", receipt(map[string]any{"text": nil, "html": trackedHTML,
		"track_clicks": true, "track_opens": true}), "Idempotency-Key", "tracked-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	msg := decodeAs[api.Message](t, res)
	require.True(t, msg.TrackClicks)
	require.True(t, msg.TrackOpens)
	require.NotNil(t, msg.Engagement)
	require.Equal(t, api.MessageEngagement{}, *msg.Engagement)

	var stored []string
	rows, err := m.pool.Query(ctx, `SELECT url FROM message_links WHERE message_id = $1 ORDER BY idx`, msg.Id)
	require.NoError(t, err)
	for rows.Next() {
		var u string
		require.NoError(t, rows.Scan(&u))
		stored = append(stored, u)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"https://shop.example/order/A-1", "https://shop.example/help"}, stored,
		"literal links only, in order; a URL built from recipient data is not stored")

	row, pm := m.claimAndBuild(t, msg.Id)
	found := clickURL.FindAllStringSubmatch(pm.HTML, -1)
	require.Len(t, found, 3, "two tracked links and the honeypot: %s", pm.HTML)
	require.NotContains(t, pm.HTML, `href="https://shop.example/order/A-1"`)
	require.Contains(t, pm.HTML, `href="https://x.example/?e=ada%40example.com"`, "the personal link stays")
	require.Contains(t, pm.HTML, "https://mail.example.com/o/", "the open pixel")

	var first string
	for _, f := range found {
		c, err := m.tokens.OpenClick(f[1])
		require.NoError(t, err)
		require.Equal(t, msg.Id, c.MessageID)
		require.Equal(t, row.ID, c.SendID)
		if c.Link == 1 {
			first = f[1]
		}
	}
	require.NotEmpty(t, first)
	res = m.do("", "GET", "/c/"+first+"?url=https://evil.example/", nil, "User-Agent", firefox)
	require.Equal(t, http.StatusFound, res.Status)
	require.Equal(t, "https://shop.example/order/A-1", res.Header.Get("Location"))

	c, err := m.tokens.OpenClick(first)
	require.NoError(t, err)
	otherAccount := c
	otherAccount.AccountID += 1000
	asCampaign := c
	asCampaign.MessageID = 0
	for name, tok := range map[string]string{
		"tampered":                               first[:len(first)-3] + "AAA",
		"other account":                          m.tokens.ClickToken(otherAccount),
		"campaign token with the message's send": m.tokens.ClickToken(asCampaign),
		"open token":                             m.tokens.OpenToken(c.Send),
	} {
		res := m.do("", "GET", "/c/"+tok, nil)
		require.Equal(t, http.StatusNotFound, res.Status, name)
		require.Empty(t, res.Header.Get("Location"), name)
	}
	require.Equal(t, http.StatusNotFound, m.do("", "GET", "/o/"+first, nil).Status, "a click token is no open token")
	res = m.do("", "GET", "/o/"+m.tokens.OpenToken(c.Send), nil, "User-Agent", firefox)
	require.Equal(t, http.StatusOK, res.Status)

	n, err := m.svc.Flush(ctx, true)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	var data string
	require.NoError(t, m.pool.QueryRow(ctx, `SELECT data::text FROM events WHERE type = 'send.clicked'
		AND (data->>'message_id')::bigint = $1`, msg.Id).Scan(&data))
	require.Contains(t, data, `"url": "https://shop.example/order/A-1"`)
	require.Contains(t, data, `"email": "ada@example.com"`)
	require.NotContains(t, data, "campaign_id", "a message's event names the message, not its stream")
	require.NotContains(t, data, "subscriber_id")
	var opened int
	require.NoError(t, m.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE type = 'send.opened'
		AND (data->>'message_id')::bigint = $1`, msg.Id).Scan(&opened))
	require.Equal(t, 1, opened)

	res = m.do(m.keyA, "GET", "/v1/messages/"+itoa(msg.Id), nil)
	require.Equal(t, http.StatusOK, res.Status)
	got := decodeAs[api.Message](t, res)
	require.NotNil(t, got.Engagement)
	require.Equal(t, api.MessageEngagement{Clicks: 1, HumanClicks: 1, Opens: 1, HumanOpens: 1}, *got.Engagement)
	require.Equal(t, http.StatusNotFound, m.do(m.keyB, "GET", "/v1/messages/"+itoa(msg.Id), nil).Status)
}

// TestMessageTrackingDefaultOff: a message that does not ask is built with its
// body untouched and stores no links; a template's track_clicks is the default of
// the messages made from it, which a message's own false overrides.
func TestMessageTrackingDefaultOff(t *testing.T) {
	t.Parallel()
	m := setupMessageTracking(t)
	ctx := context.Background()
	res := m.do(m.keyA, "POST", "/v1/messages", receipt(map[string]any{"text": nil, "html": trackedHTML}),
		"Idempotency-Key", "plain-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	msg := decodeAs[api.Message](t, res)
	require.False(t, msg.TrackClicks)
	require.False(t, msg.TrackOpens)
	require.Nil(t, msg.Engagement)
	_, pm := m.claimAndBuild(t, msg.Id)
	require.Contains(t, pm.HTML, `<a href="https://shop.example/order/A-1">Your order</a>`)
	require.NotContains(t, pm.HTML, "mail.example.com")
	var links int
	require.NoError(t, m.pool.QueryRow(ctx, `SELECT count(*) FROM message_links`).Scan(&links))
	require.Zero(t, links)

	res = m.do(m.keyA, "POST", "/v1/templates", map[string]any{"name": "order", "subject": "Order",
		"html": `<a href="https://shop.example/track">Track it</a>`, "track_clicks": true})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	require.True(t, tpl.TrackClicks)
	fromTpl := map[string]any{"to": "bob@example.com", "from": "shop@example.com", "template_id": tpl.Id}
	res = m.do(m.keyA, "POST", "/v1/messages", fromTpl, "Idempotency-Key", "tpl-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	require.True(t, decodeAs[api.Message](t, res).TrackClicks, "the template's default")
	fromTpl["track_clicks"] = false
	res = m.do(m.keyA, "POST", "/v1/messages", fromTpl, "Idempotency-Key", "tpl-2")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	require.False(t, decodeAs[api.Message](t, res).TrackClicks, "the message's own false wins")
	res = m.do(m.keyA, "PATCH", "/v1/templates/"+itoa(tpl.Id), map[string]any{"track_clicks": false})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.False(t, decodeAs[api.Template](t, res).TrackClicks)
}

// TestMessageTrackingIdempotency: track_clicks and track_opens are part of the
// request the Idempotency-Key names: the same key with another value is 422 and
// changes nothing; the same request replays.
func TestMessageTrackingIdempotency(t *testing.T) {
	t.Parallel()
	m := setupMessageTracking(t)
	body := receipt(map[string]any{"text": nil, "html": trackedHTML, "track_clicks": true})
	res := m.do(m.keyA, "POST", "/v1/messages", body, "Idempotency-Key", "idem-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	for name, v := range map[string]map[string]any{
		"track_clicks false":  {"track_clicks": false},
		"track_clicks absent": {"track_clicks": nil},
		"track_opens true":    {"track_opens": true},
	} {
		other := receipt(map[string]any{"text": nil, "html": trackedHTML, "track_clicks": true})
		for k, x := range v {
			if x == nil {
				delete(other, k)
			} else {
				other[k] = x
			}
		}
		res := m.do(m.keyA, "POST", "/v1/messages", other, "Idempotency-Key", "idem-1")
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, name)
		require.Contains(t, string(res.Body), "/Idempotency-Key", name)
	}
	res = m.do(m.keyA, "POST", "/v1/messages", body, "Idempotency-Key", "idem-1")
	require.Equal(t, http.StatusAccepted, res.Status)
	require.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))
	for field, bad := range map[string]any{"track_clicks": "yes", "track_opens": 1} {
		res := m.do(m.keyA, "POST", "/v1/messages", receipt(map[string]any{field: bad}), "Idempotency-Key", "bad-"+field)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, field)
		require.Contains(t, string(res.Body), "/"+field, field)
	}
	res = m.do(m.keyA, "POST", "/v1/templates", map[string]any{"name": "t", "subject": "s", "track_clicks": "on"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), "/track_clicks")
	var links int
	require.NoError(t, m.pool.QueryRow(context.Background(), `SELECT count(*) FROM message_links`).Scan(&links))
	require.Equal(t, 2, links, "stored once")
}

// TestMessageTrackingRetention: message retention deleting a tracked message
// deletes its stored links and its hits, and its click tokens then answer 404.
func TestMessageTrackingRetention(t *testing.T) {
	t.Parallel()
	m := setupMessageTracking(t)
	ctx := context.Background()
	res := m.do(m.keyA, "POST", "/v1/messages", receipt(map[string]any{"text": nil, "html": trackedHTML,
		"track_clicks": true}), "Idempotency-Key", "ret-1")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	msg := decodeAs[api.Message](t, res)
	row, pm := m.claimAndBuild(t, msg.Id)
	tok := clickURL.FindStringSubmatch(pm.HTML)[1]
	_, err := m.pool.Exec(ctx, `UPDATE sends SET status = 'sent', sent_at = now() - interval '1 hour', lease_until = NULL
		WHERE id = $1`, row.ID)
	require.NoError(t, err)
	// A second process, whose cache has not seen the message, reads the links from the database.
	fresh := tracking.New(m.pool, m.tokens, tracking.Config{}, nil)
	_, err = fresh.Click(ctx, tok, "GET", firefox)
	require.NoError(t, err)
	n, err := fresh.Flush(ctx, true)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	deleted, err := store.New(m.pool).MessageDeleteRetired(ctx, store.MessageDeleteRetiredParams{
		Cutoff: time.Now().Add(time.Hour), N: 100})
	require.NoError(t, err)
	require.EqualValues(t, 1, deleted)
	for _, table := range []string{"message_links", "tracking_hits"} {
		var left int
		require.NoError(t, m.pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE message_id = $1`, msg.Id).Scan(&left))
		require.Zero(t, left, table)
	}
	// The server's tracker never cached the message's links: it finds none.
	res = m.do("", "GET", "/c/"+tok, nil)
	require.Equal(t, http.StatusNotFound, res.Status)
	require.Empty(t, res.Header.Get("Location"))
}
