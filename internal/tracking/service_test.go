package tracking_test

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/tracking"
)

const chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }
func (c *clock) Set(t time.Time)     { c.mu.Lock(); c.now = t; c.mu.Unlock() }
func exec(t *testing.T, p *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	_, err := p.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// env is one database with two accounts; account A has a sent campaign with two
// tracked links and three sends, delivered at sentAt.
type env struct {
	pool             *pgxpool.Pool
	svc              *tracking.Service
	tk               *tracking.Tokens
	clock            *clock
	accountA, accB   int64
	campaign, campB  int64
	sends            []int64
	sendB            int64
	sentAt           time.Time
	publicA, publicB string
}

func setup(t *testing.T) env {
	t.Helper()
	pool := dbtest.New(t)
	e := env{pool: pool, clock: &clock{}, tk: newTokens(t), sentAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	e.clock.Set(e.sentAt)
	// Ids differ across tables and accounts, so a swapped id cannot pass.
	exec(t, pool, `SELECT setval(pg_get_serial_sequence('accounts','id'), 100)`)
	exec(t, pool, `SELECT setval(pg_get_serial_sequence('campaigns','id'), 500)`)
	exec(t, pool, `SELECT setval(pg_get_serial_sequence('sends','id'), 9000)`)
	fx := testfactory.New(pool)
	a, b := fx.Account(t, "Acme News"), fx.Account(t, "Other")
	e.accountA, e.accB, e.publicA, e.publicB = a.ID, b.ID, a.PublicID, b.PublicID
	camp := func(acct int64, name string) int64 {
		c := fx.Campaign(t, acct, testfactory.Campaign{Name: name,
			Subject:   "Hello {{if .Archive}}reader{{else}}{{.Name}}{{end}}",
			FromEmail: "news@example.com",
			HTML:      `<p>Dear {{.Name}} ({{.Email}}, {{.Attributes.city}})</p><a href="https://shop.example/a">A</a> <a href="https://shop.example/b">B</a><a href="{{.WebViewURL}}">web</a>`,
			Text:      "Dear {{.Name}}", Status: "sent", Archive: true, StartedAt: &e.sentAt})
		fx.TrackedLinks(t, acct, c, "https://shop.example/a", "https://shop.example/b")
		return c
	}
	e.campaign, e.campB = camp(e.accountA, "december"), camp(e.accB, "other")
	for i, email := range []string{"ann@example.org", "bob@example.org", "cy@example.org"} {
		sub := fx.Subscriber(t, e.accountA, testfactory.Subscriber{Email: email,
			Name: []string{"Ann Secret", "Bob Secret", "Cy Secret"}[i], Attributes: []byte(`{"city":"Lyon"}`), Status: "confirmed"})
		e.sends = append(e.sends, fx.Send(t, e.accountA, e.campaign, sub, testfactory.Send{Email: email, Status: "sent", SentAt: &e.sentAt}))
	}
	subB := fx.Subscriber(t, e.accB, testfactory.Subscriber{Email: "zed@example.org", Status: "confirmed"})
	e.sendB = fx.Send(t, e.accB, e.campB, subB, testfactory.Send{Email: "zed@example.org", Status: "sent", SentAt: &e.sentAt})
	e.svc = tracking.New(pool, e.tk, tracking.Config{Now: e.clock.Now}, nil)
	return e
}

func (e env) click(send int64, link int) string {
	return e.tk.ClickToken(tracking.Click{Send: tracking.Send{AccountID: e.accountA, CampaignID: e.campaign, SendID: send}, Link: link, Links: 2})
}

func TestClickAnswersTheStoredURLOnly(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	u, err := e.svc.Click(ctx, e.click(e.sends[0], 2), "GET", chrome)
	require.NoError(t, err)
	require.Equal(t, "https://shop.example/b", u)
	u, err = e.svc.Click(ctx, e.click(e.sends[0], 0), "GET", chrome)
	require.NoError(t, err)
	require.Equal(t, "", u, "the honeypot has no URL")

	// A token that names account B with account A's campaign (signed: the claim
	// is ours, but the pair does not exist), or a link the campaign does not
	// have, finds nothing.
	for name, tok := range map[string]string{
		"other account, our campaign": e.tk.ClickToken(tracking.Click{Send: tracking.Send{AccountID: e.accB, CampaignID: e.campaign, SendID: e.sends[0]}, Link: 1, Links: 2}),
		"link past the stored ones":   e.tk.ClickToken(tracking.Click{Send: tracking.Send{AccountID: e.accountA, CampaignID: e.campaign, SendID: e.sends[0]}, Link: 3, Links: 3}),
		"unknown campaign":            e.tk.ClickToken(tracking.Click{Send: tracking.Send{AccountID: e.accountA, CampaignID: 999999, SendID: e.sends[0]}, Link: 1, Links: 2}),
		"tampered":                    e.click(e.sends[0], 1)[:40] + "x" + e.click(e.sends[0], 1)[41:],
	} {
		_, err := e.svc.Click(ctx, tok, "GET", chrome)
		require.True(t, apperr.Is(err, apperr.NotFound), "%s: %v", name, err)
	}
	// Account B's own click resolves to B's links (the cache is per campaign and account).
	u, err = e.svc.Click(ctx, e.tk.ClickToken(tracking.Click{Send: tracking.Send{AccountID: e.accB, CampaignID: e.campB, SendID: e.sendB}, Link: 1, Links: 2}), "GET", chrome)
	require.NoError(t, err)
	require.Equal(t, "https://shop.example/a", u)
}

func TestHitsAreHeldThenWrittenClassifiedWithEvents(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	click := func(send int64, link int, method, ua string) {
		_, err := e.svc.Click(ctx, e.click(send, link), method, ua)
		require.NoError(t, err)
	}
	// Two seconds after delivery: a gateway fetches both links of Ann's message at once.
	e.clock.Add(2 * time.Second)
	click(e.sends[0], 1, "GET", chrome)
	e.clock.Add(100 * time.Millisecond)
	click(e.sends[0], 2, "GET", chrome)
	// An hour later: Bob clicks link 1 twice, a HEAD and a curl hit his link 2, a
	// scanner follows the honeypot of Cy's message.
	e.clock.Set(e.sentAt.Add(time.Hour))
	click(e.sends[1], 1, "GET", chrome)
	click(e.sends[1], 1, "GET", chrome)
	e.clock.Add(3 * time.Second)
	click(e.sends[1], 2, "HEAD", chrome)
	e.clock.Add(5 * time.Second)
	click(e.sends[2], 2, "GET", "curl/8.5.0")
	click(e.sends[2], 0, "GET", chrome)
	require.NoError(t, e.svc.Open(e.tk.OpenToken(tracking.Send{AccountID: e.accountA, CampaignID: e.campaign, SendID: e.sends[1]}), "GET", "Mozilla/5.0"))
	require.NoError(t, e.svc.Open(e.tk.OpenToken(tracking.Send{AccountID: e.accountA, CampaignID: e.campaign, SendID: e.sends[2]}), "GET", chrome))

	// Hits younger than the burst window stay held; the rest are written.
	n, err := e.svc.Flush(ctx, false)
	require.NoError(t, err)
	require.Equal(t, 5, n, "Ann's two and Bob's three are older than a second; Cy's and the opens are not")
	e.clock.Add(2 * time.Second)
	n, err = e.svc.Flush(ctx, false)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	n, err = e.svc.Flush(ctx, true)
	require.NoError(t, err)
	require.Zero(t, n, "nothing is written twice")

	type row struct {
		Send    int64
		Kind    string
		Link    int
		Bot     bool
		Reasons []string
	}
	rows, err := e.pool.Query(ctx, `SELECT send_id, kind, link_idx, suspected_bot, bot_reasons FROM tracking_hits`)
	require.NoError(t, err)
	var got []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.Send, &r.Kind, &r.Link, &r.Bot, &r.Reasons))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	require.ElementsMatch(t, []row{
		{e.sends[0], "click", 1, true, []string{"burst", "delivery"}},
		{e.sends[0], "click", 2, true, []string{"burst", "delivery"}},
		{e.sends[1], "click", 1, false, []string{}},
		{e.sends[1], "click", 1, false, []string{}},
		{e.sends[1], "click", 2, true, []string{"head"}},
		{e.sends[2], "click", 2, true, []string{"scanner_ua"}},
		{e.sends[2], "click", 0, true, []string{"honeypot"}},
		{e.sends[1], "open", 0, true, []string{"apple_mpp"}},
		{e.sends[2], "open", 0, false, []string{}},
	}, got)

	// One event per hit, written with it; the human ones say so.
	evs, err := e.pool.Query(ctx, `SELECT type, data FROM events WHERE account_id = $1 ORDER BY id`, e.accountA)
	require.NoError(t, err)
	var human, bots, opens int
	for evs.Next() {
		var typ string
		var data map[string]any
		var raw []byte
		require.NoError(t, evs.Scan(&typ, &raw))
		require.NoError(t, json.Unmarshal(raw, &data))
		require.Equal(t, float64(e.campaign), data["campaign_id"])
		switch {
		case typ == "send.opened":
			opens++
		case typ == "send.clicked" && data["human"] == true:
			human++
			require.Equal(t, "https://shop.example/a", data["url"])
			require.Equal(t, float64(1), data["link_index"])
			require.Equal(t, "bob@example.org", data["email"])
		case typ == "send.clicked":
			bots++
			require.Equal(t, true, data["suspected_bot"])
		}
	}
	require.NoError(t, evs.Err())
	require.Equal(t, [3]int{2, 5, 2}, [3]int{human, bots, opens})

	links, err := e.svc.LinkStats(ctx, e.accountA, e.campaign)
	require.NoError(t, err)
	require.Equal(t, []tracking.LinkStats{
		{Index: 1, URL: "https://shop.example/a", Total: 3, Unique: 2, Human: 2, UniqueHuman: 1},
		{Index: 2, URL: "https://shop.example/b", Total: 3, Unique: 3, Human: 0, UniqueHuman: 0},
	}, links)
	tot, err := e.svc.Totals(ctx, e.accountA, e.campaign)
	require.NoError(t, err)
	require.Equal(t, tracking.Totals{Clicks: 6, UniqueClicks: 3, HumanClicks: 2, UniqueHumanClicks: 1, HoneypotHits: 1,
		Opens: 2, UniqueOpens: 2, HumanOpens: 1, UniqueHumanOpens: 1}, tot)

	// The totals are reused for TotalsTTL (stats are polled), then counted again.
	_, err = e.svc.Click(ctx, e.click(e.sends[1], 2), "GET", chrome)
	require.NoError(t, err)
	_, err = e.svc.Flush(ctx, true)
	require.NoError(t, err)
	again, err := e.svc.Totals(ctx, e.accountA, e.campaign)
	require.NoError(t, err)
	require.Equal(t, tot, again)
	e.clock.Add(tracking.TotalsTTL)
	again, err = e.svc.Totals(ctx, e.accountA, e.campaign)
	require.NoError(t, err)
	require.Equal(t, tot.Clicks+1, again.Clicks)

	// Another account's campaign id answers 404, not empty stats.
	_, err = e.svc.LinkStats(ctx, e.accB, e.campaign)
	require.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	_, err = e.svc.Totals(ctx, e.accB, e.campaign)
	require.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
}

func TestHitsAreDroppedNotQueuedPastTheBound(t *testing.T) {
	t.Parallel()
	e := setup(t)
	svc := tracking.New(e.pool, e.tk, tracking.Config{Now: e.clock.Now, MaxHeld: 2}, nil)
	for range 5 {
		_, err := svc.Click(context.Background(), e.click(e.sends[1], 1), "GET", chrome)
		require.NoError(t, err, "the redirect answers even when hits are dropped")
	}
	require.EqualValues(t, 3, svc.Dropped())
	n, err := svc.Flush(context.Background(), true)
	require.NoError(t, err)
	require.Equal(t, 2, n)
}

func TestArchiveRendersWithoutRecipientData(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	idx, err := e.svc.ArchiveIndex(ctx, e.publicA, "/archive/"+e.publicA)
	require.NoError(t, err)
	require.Contains(t, string(idx), `href="/archive/`+e.publicA+`/`)
	require.Contains(t, string(idx), ">Hello reader</a>", "the list shows the subject as the archive renders it")
	require.NotContains(t, string(idx), "{{", "never the subject's template")
	require.NotContains(t, string(idx), "<script")

	p, err := e.svc.ArchivePage(ctx, e.publicA, e.campaign)
	require.NoError(t, err)
	require.Equal(t, "Hello reader", p.Subject)
	for _, personal := range []string{"Secret", "example.org", "Lyon"} {
		require.NotContains(t, p.HTML+p.Subject+p.Text, personal)
	}
	require.Contains(t, p.HTML, `href="https://shop.example/a"`, "archive links are the original ones")

	// Another account's campaign under this account's address, an unpublished
	// campaign, and an unknown address are all 404.
	_, err = e.svc.ArchivePage(ctx, e.publicA, e.campB)
	require.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	exec(t, e.pool, `UPDATE campaigns SET archive = false WHERE id = $1`, e.campaign)
	_, err = e.svc.ArchivePage(ctx, e.publicA, e.campaign)
	require.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
	idx, err = e.svc.ArchiveIndex(ctx, e.publicA, "/archive/"+e.publicA)
	require.NoError(t, err)
	require.Contains(t, string(idx), "Nothing published yet")
	_, err = e.svc.ArchiveIndex(ctx, "pub_nobody", "/archive/pub_nobody")
	require.True(t, apperr.Is(err, apperr.NotFound), "%v", err)
}

func TestWebViewRendersTheSendItsTokenNames(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	tok := e.tk.ViewToken(tracking.Send{AccountID: e.accountA, CampaignID: e.campaign, SendID: e.sends[1]})
	p, err := e.svc.WebView(ctx, tok, func(a, c, s int64) string { return "https://mail.example.com/u/x" })
	require.NoError(t, err)
	require.Equal(t, "Hello Bob Secret", p.Subject)
	require.Contains(t, p.HTML, "Bob Secret (bob@example.org, Lyon)")
	require.Contains(t, p.HTML, `href="https://mail.example.com/v/`+tok+`"`)
	// A token naming a send with another account or campaign finds nothing.
	for _, s := range []tracking.Send{
		{AccountID: e.accB, CampaignID: e.campaign, SendID: e.sends[1]},
		{AccountID: e.accountA, CampaignID: e.campB, SendID: e.sends[1]},
		{AccountID: e.accountA, CampaignID: e.campaign, SendID: e.sendB},
	} {
		_, err := e.svc.WebView(ctx, e.tk.ViewToken(s), nil)
		require.True(t, apperr.Is(err, apperr.NotFound), "%+v: %v", s, err)
	}
	_, err = e.svc.WebView(ctx, e.tk.OpenToken(tracking.Send{AccountID: e.accountA, CampaignID: e.campaign, SendID: e.sends[1]}), nil)
	require.True(t, apperr.Is(err, apperr.NotFound), "an open token is no view token")
}

// A hit that PostgreSQL refuses (here by a trigger) is retried alone and, after
// maxWriteAttempts failed statements, dropped; the hits of its first batch are
// written meanwhile and later ones are not held up.
func TestAHitThatCannotBeWrittenIsDroppedAlone(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	exec(t, e.pool, `CREATE FUNCTION refuse_hit() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.send_id = `+itoa64(e.sends[2])+` THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`)
	exec(t, e.pool, `CREATE TRIGGER refuse_hit BEFORE INSERT ON tracking_hits FOR EACH ROW EXECUTE FUNCTION refuse_hit()`)
	e.clock.Set(e.sentAt.Add(time.Hour))
	for _, send := range e.sends {
		_, err := e.svc.Click(ctx, e.click(send, 1), "GET", chrome)
		require.NoError(t, err)
	}
	n, err := e.svc.Flush(ctx, true)
	require.Error(t, err)
	require.Zero(t, n, "the batch with the refused hit fails whole")
	n, err = e.svc.Flush(ctx, true)
	require.Error(t, err)
	require.Equal(t, 2, n, "retried one by one: the two others are written")
	for range 3 {
		_, err = e.svc.Flush(ctx, true)
		require.Error(t, err)
	}
	require.EqualValues(t, 1, e.svc.Dropped())
	_, err = e.svc.Click(ctx, e.click(e.sends[0], 2), "GET", chrome)
	require.NoError(t, err)
	n, err = e.svc.Flush(ctx, true)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	var rows int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM tracking_hits`).Scan(&rows))
	require.Equal(t, 3, rows)
}

func itoa64(i int64) string { return strconv.FormatInt(i, 10) }
