package httpapi_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
)

// Double opt-in end to end through the real executor: a form post makes a
// pending subscriber and exactly one confirmation at the sink; a second sign-up
// sends nothing more; the pending address gets no campaign of the list; the link
// from the delivered body shows a page (GET changes nothing), a forged or expired
// link changes nothing, and POST confirms: subscriber confirmed, membership
// subscribed, one subscriber.confirmed event.
func TestDoubleOptInEndToEnd(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	ctx := context.Background()
	news := o.doubleList(o.keyA, "Nouvelles", "fr")
	require.Equal(t, api.ListOptin("double"), news.Optin)
	require.True(t, news.Public)
	s := o.sinkExecutor(t)

	res := o.form(o.pubA, "198.51.100.7:4000", url.Values{"email": {"Ada@Example.com"}, "name": {"Ada"},
		"list_ids": {itoa(news.Id)}})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Contains(t, res.Header.Get("Content-Type"), "text/html")
	require.Contains(t, string(res.Body), "Consultez votre boîte de réception")
	status, member := o.state("ada@example.com", news.Id)
	require.Equal(t, "pending", status)
	require.Equal(t, "pending", member)

	// The same address again (JSON this time): the same answer, no second email.
	res = o.raw("POST", "/p/"+o.pubA+"/subscribe", `{"email":"ada@example.com","list_ids":[`+itoa(news.Id)+`]}`,
		"198.51.100.8:4000", "Content-Type", "application/json")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	require.JSONEq(t, `{"status":"accepted","confirmation_required":true}`, string(res.Body))
	require.Equal(t, 1, o.confirmations("ada@example.com"))

	deliveries := waitDeliveries(t, s, 1)
	require.Len(t, deliveries, 1)
	var body string
	for job, d := range deliveries {
		require.True(t, strings.HasPrefix(job, "message:"), job)
		body = string(d.Body)
	}
	require.Contains(t, body, "Merci de confirmer votre abonnement")
	require.Contains(t, body, "Nouvelles")
	m := confirmPath.FindStringSubmatch(body)
	require.NotNil(t, m, "no confirmation link in %s", body)
	link := m[1]

	// A campaign to the list while Ada is pending goes to Bob (confirmed) only.
	res = o.do(o.keyA, "POST", "/v1/subscribers", map[string]any{"email": "bob@example.com", "status": "confirmed"})
	require.Equal(t, http.StatusCreated, res.Status)
	bob := decodeAs[api.Subscriber](t, res)
	res = o.do(o.keyA, "POST", "/v1/lists/"+itoa(news.Id)+"/members", map[string]any{"subscriber_ids": []int64{bob.Id}})
	require.Equal(t, http.StatusOK, res.Status)
	res = o.do(o.keyA, "POST", "/v1/campaigns", map[string]any{"name": "n1", "subject": "Hi", "from_email": "news@example.com",
		"text_template": "Hello", "list_ids": []int64{news.Id}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	camp := decodeAs[api.Campaign](t, res)
	res = o.do(o.keyA, "POST", "/v1/campaigns/"+itoa(camp.Id)+"/approve", map[string]any{})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	deliveries = waitDeliveries(t, s, 2)
	require.Len(t, deliveries, 2)
	require.Contains(t, deliveries, "campaign:"+itoa(camp.Id)+":"+itoa(bob.Id))
	var sends int
	require.NoError(t, o.pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE campaign_id = $1`, camp.Id).Scan(&sends))
	require.Equal(t, 1, sends, "the pending address is not a recipient")

	// GET shows what confirming does and changes nothing.
	res = o.raw("GET", link, "", "203.0.113.9:1")
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, string(res.Body), `<form method="post">`)
	require.Contains(t, string(res.Body), "Nouvelles")
	status, member = o.state("ada@example.com", news.Id)
	require.Equal(t, []string{"pending", "pending"}, []string{status, member})

	// Forged: every flipped byte, a truncated and a foreign token change nothing.
	token := strings.TrimPrefix(link, "/p/confirm/")
	raw, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	for i := range raw {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x04
		res = o.raw("POST", "/p/confirm/"+base64.RawURLEncoding.EncodeToString(b), "", "203.0.113.9:1")
		require.Equal(t, http.StatusNotFound, res.Status, "byte %d", i)
	}
	for _, bad := range []string{token[:len(token)-2], "x", strings.Repeat("A", 3000), token + "AA"} {
		res = o.raw("POST", "/p/confirm/"+bad, "", "203.0.113.9:1")
		require.Equal(t, http.StatusNotFound, res.Status)
		require.Contains(t, string(res.Body), "invalid or has expired")
	}
	// Expired: the same link past its TTL.
	o.clock.add(optinLinkTTL + time.Minute)
	res = o.raw("POST", link, "", "203.0.113.9:1")
	require.Equal(t, http.StatusNotFound, res.Status)
	res = o.raw("GET", link, "", "203.0.113.9:1")
	require.Equal(t, http.StatusNotFound, res.Status)
	status, member = o.state("ada@example.com", news.Id)
	require.Equal(t, []string{"pending", "pending"}, []string{status, member}, "a bad link changed something")
	require.Zero(t, o.eventCount("subscriber.confirmed"))
	o.clock.add(-optinLinkTTL - time.Minute)

	res = o.raw("POST", link, "", "203.0.113.9:1")
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Contains(t, string(res.Body), "Votre abonnement est confirmé")
	status, member = o.state("ada@example.com", news.Id)
	require.Equal(t, []string{"confirmed", "subscribed"}, []string{status, member})
	res = o.raw("POST", link, "", "203.0.113.9:1")
	require.Equal(t, http.StatusOK, res.Status, "confirming twice is harmless")
	require.Equal(t, 1, o.eventCount("subscriber.confirmed"))
	require.Equal(t, 1, o.eventCount("subscriber.created"))
	res = o.raw("GET", link, "", "203.0.113.9:1")
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, string(res.Body), "déjà confirmé")

	// Signing up again once confirmed changes nothing and sends nothing, even
	// after the resend interval.
	o.clock.add(2 * time.Hour)
	res = o.form(o.pubA, "198.51.100.7:4000", url.Values{"email": {"ada@example.com"}, "list_ids": {itoa(news.Id)}})
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, 1, o.confirmations("ada@example.com"))
	status, member = o.state("ada@example.com", news.Id)
	require.Equal(t, []string{"confirmed", "subscribed"}, []string{status, member})
}

// A single opt-in list subscribes at once; an address that had unsubscribed from
// it must confirm by email to come back; a suppressed address is answered the
// same and changes nothing; a confirmed subscriber is never downgraded.
func TestSignupSingleOptInAndSuppressed(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	ctx := context.Background()
	single := o.list(o.keyA, "Weekly", map[string]any{"public": true, "optin_from_email": "news@example.com"})
	require.Equal(t, api.ListOptin("single"), single.Optin)
	double := o.doubleList(o.keyA, "Beta", "en")
	sign := func(email string, lists ...int64) response {
		b := `{"email":"` + email + `","list_ids":[`
		for i, l := range lists {
			if i > 0 {
				b += ","
			}
			b += itoa(l)
		}
		return o.raw("POST", "/p/"+o.pubA+"/subscribe", b+`]}`, "198.51.100.1:1", "Content-Type", "application/json")
	}
	res := sign("cy@example.com", single.Id)
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	require.JSONEq(t, `{"status":"accepted","confirmation_required":false}`, string(res.Body))
	status, member := o.state("cy@example.com", single.Id)
	require.Equal(t, []string{"confirmed", "subscribed"}, []string{status, member})
	require.Zero(t, o.confirmations("cy@example.com"))
	require.Equal(t, 1, o.eventCount("subscriber.subscribed"))

	// A confirmed subscriber signing up to a double list stays confirmed; the new
	// membership waits.
	res = sign("cy@example.com", double.Id)
	require.Equal(t, http.StatusAccepted, res.Status)
	status, member = o.state("cy@example.com", double.Id)
	require.Equal(t, []string{"confirmed", "pending"}, []string{status, member})
	require.Equal(t, 1, o.confirmations("cy@example.com"))

	// Left the single list: a sign-up makes it pending and asks for confirmation
	// (after the resend interval), it does not resubscribe directly.
	_, err := o.pool.Exec(ctx, `UPDATE list_members SET status = 'unsubscribed' WHERE list_id = $1`, single.Id)
	require.NoError(t, err)
	o.clock.add(61 * time.Minute)
	res = sign("cy@example.com", single.Id)
	require.JSONEq(t, `{"status":"accepted","confirmation_required":false}`, string(res.Body))
	_, member = o.state("cy@example.com", single.Id)
	require.Equal(t, "pending", member)
	require.Equal(t, 2, o.confirmations("cy@example.com"))

	// Suppressed: the same answer, nothing created, nothing sent.
	res = o.do(o.keyA, "POST", "/v1/suppressions", map[string]any{"email": "gone@example.com"})
	require.Equal(t, http.StatusCreated, res.Status)
	for _, l := range []int64{single.Id, double.Id} {
		res = sign("gone@example.com", l)
		require.Equal(t, http.StatusAccepted, res.Status)
	}
	var n int
	require.NoError(t, o.pool.QueryRow(ctx, `SELECT count(*) FROM subscribers WHERE email_lower = 'gone@example.com'`).Scan(&n))
	require.Zero(t, n)
	require.Zero(t, o.confirmations("gone@example.com"))
}

// A flood of sign-ups: past the per-address burst the answer is 429
// problem+json with Retry-After (for a form, a page with the same status); with
// the address limit off, twenty sign-ups of one address (ten at once) send one
// confirmation; the account limit holds across client addresses.
func TestSignupFloodRateLimited(t *testing.T) {
	t.Parallel()
	o := setupOptin(t, func(c *config.Config) {
		c.OptinAddrRatePerSecond, c.OptinAddrBurst = 0.001, 3
		c.OptinAccountRatePerSecond, c.OptinAccountBurst = 0.001, 40
	})
	l := o.doubleList(o.keyA, "News", "en")
	body := `{"email":"flood@example.com","list_ids":[` + itoa(l.Id) + `]}`
	var limited int
	for i := range 10 {
		res := o.raw("POST", "/p/"+o.pubA+"/subscribe", body, "192.0.2.50:1000", "Content-Type", "application/json")
		if i < 3 {
			require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
			continue
		}
		require.Equal(t, http.StatusTooManyRequests, res.Status)
		require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
		require.NotEmpty(t, res.Header.Get("Retry-After"))
		limited++
	}
	require.Equal(t, 7, limited)
	res := o.form(o.pubA, "192.0.2.50:1000", url.Values{"email": {"x@example.com"}, "list_ids": {itoa(l.Id)}})
	require.Equal(t, http.StatusTooManyRequests, res.Status)
	require.Contains(t, res.Header.Get("Content-Type"), "text/html")
	require.NotEmpty(t, res.Header.Get("Retry-After"))

	// From many addresses at once: one confirmation per address per hour.
	done := make(chan int, 10)
	for i := range 10 {
		go func() {
			req := o.raw("POST", "/p/"+o.pubA+"/subscribe", body, "192.0.2."+itoa(int64(100+i))+":1", "Content-Type", "application/json")
			done <- req.Status
		}()
	}
	for range 10 {
		require.Equal(t, http.StatusAccepted, <-done)
	}
	require.Equal(t, 1, o.confirmations("flood@example.com"))

	// The account's bucket (40) is spent by now or soon, whatever the client.
	var accountLimited bool
	for i := range 40 {
		res := o.raw("POST", "/p/"+o.pubA+"/subscribe", body, "192.0.2."+itoa(int64(10+i))+":2", "Content-Type", "application/json")
		if res.Status == http.StatusTooManyRequests {
			accountLimited = true
			break
		}
	}
	require.True(t, accountLimited)
	// Account B's form has its own bucket.
	lb := o.doubleList(o.keyB, "B news", "en")
	res = o.raw("POST", "/p/"+o.pubB+"/subscribe", `{"email":"b@example.com","list_ids":[`+itoa(lb.Id)+`]}`,
		"192.0.2.251:1", "Content-Type", "application/json")
	require.Equal(t, http.StatusAccepted, res.Status)
	require.Equal(t, 1, o.confirmations("flood@example.com"))
}

// The honeypot: a filled field answers like a success and changes nothing.
func TestSignupHoneypot(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	l := o.doubleList(o.keyA, "News", "en")
	res := o.form(o.pubA, "192.0.2.1:1", url.Values{"email": {"bot@example.com"}, "list_ids": {itoa(l.Id)},
		"website": {"http://spam.example"}})
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, string(res.Body), `id="thanks"`)
	res = o.raw("POST", "/p/"+o.pubA+"/subscribe", `{"email":"bot@example.com","list_ids":[`+itoa(l.Id)+`],"website":"x"}`,
		"192.0.2.1:1", "Content-Type", "application/json")
	require.Equal(t, http.StatusAccepted, res.Status)
	status, _ := o.state("bot@example.com", l.Id)
	require.Empty(t, status)
	require.Zero(t, o.confirmations("bot@example.com"))
}

// CORS: any origin may post the form from a browser, without credentials.
func TestSignupCORS(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	l := o.doubleList(o.keyA, "News", "en")
	req, _ := http.NewRequest(http.MethodOptions, "/p/"+o.pubA+"/subscribe", nil)
	req.Header.Set("Origin", "https://shop.example.org")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	rec := newRecorder()
	o.handler.ServeHTTP(rec, req)
	require.Contains(t, []int{http.StatusOK, http.StatusNoContent}, rec.Code)
	require.Equal(t, "*", rec.Header().Get("Access-Control-Allow-Origin"))
	require.Contains(t, strings.ToLower(rec.Header().Get("Access-Control-Allow-Headers")), "content-type")
	require.Empty(t, rec.Header().Get("Access-Control-Allow-Credentials"))

	res := o.raw("POST", "/p/"+o.pubA+"/subscribe", `{"email":"c@example.com","list_ids":[`+itoa(l.Id)+`]}`,
		"192.0.2.1:1", "Content-Type", "application/json", "Origin", "https://shop.example.org")
	require.Equal(t, http.StatusAccepted, res.Status)
	require.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
	require.Empty(t, res.Header.Get("Access-Control-Allow-Credentials"))
	// The tenant API does not take the public CORS policy.
	res = o.do(o.keyA, "GET", "/v1/account", nil, "Origin", "https://shop.example.org")
	require.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))
}

// Cross-tenant: a form is keyed by its account's public id; neither account's
// form can sign up to the other's lists, nor to its own private ones, and an
// unknown public id is 404. Nothing changes in either account.
func TestSignupCrossTenant(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	ctx := context.Background()
	la := o.doubleList(o.keyA, "A news", "en")
	lb := o.doubleList(o.keyB, "B news", "en")
	private := o.list(o.keyA, "A private", map[string]any{"optin": "double", "optin_from_email": "a@example.com"})
	count := func() (n int) {
		require.NoError(t, o.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM subscribers) + (SELECT count(*) FROM list_members)
			+ (SELECT count(*) FROM messages)`).Scan(&n))
		return n
	}
	before := count()
	for _, c := range []struct {
		pub  string
		list int64
		want int
	}{
		{o.pubB, la.Id, http.StatusUnprocessableEntity},
		{o.pubA, lb.Id, http.StatusUnprocessableEntity},
		{o.pubA, private.Id, http.StatusUnprocessableEntity},
		{o.pubB, private.Id, http.StatusUnprocessableEntity},
		{"pub_00000000000000000000000000000000", la.Id, http.StatusNotFound},
		{itoa(1), la.Id, http.StatusNotFound},
	} {
		body := `{"email":"x@example.com","list_ids":[` + itoa(c.list) + `]}`
		res := o.raw("POST", "/p/"+c.pub+"/subscribe", body, "192.0.2.9:1", "Content-Type", "application/json")
		require.Equal(t, c.want, res.Status, "%s list %d: %s", c.pub, c.list, res.Body)
		require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
		if c.want == http.StatusUnprocessableEntity {
			require.Contains(t, string(res.Body), `"pointer":"/list_ids/0"`)
		}
		res = o.form(c.pub, "192.0.2.9:1", url.Values{"email": {"x@example.com"}, "list_ids": {itoa(c.list)}})
		require.Equal(t, c.want, res.Status)
		require.Contains(t, res.Header.Get("Content-Type"), "text/html")
	}
	require.Equal(t, before, count(), "a refused sign-up changed something")

	// A's own public list with B's list in the same request: refused whole.
	res := o.raw("POST", "/p/"+o.pubA+"/subscribe", `{"email":"x@example.com","list_ids":[`+itoa(la.Id)+`,`+itoa(lb.Id)+`]}`,
		"192.0.2.9:1", "Content-Type", "application/json")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), `"pointer":"/list_ids/1"`)
	require.Equal(t, before, count())
}

// A list's own template replaces the built-in confirmation; B cannot use A's,
// and 0 goes back to the built-in email.
func TestSignupConfirmationTemplate(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	res := o.do(o.keyA, "POST", "/v1/templates", map[string]any{"name": "optin", "subject": "Confirm, {{.Name}}",
		"text":        "Lists: {{.Attributes.lists}}. Click {{.Attributes.confirm_url}}",
		"sample_data": map[string]any{"confirm_url": "https://example.com/p/confirm/x", "lists": "News"}})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	l := o.list(o.keyA, "News", map[string]any{"optin": "double", "public": true, "optin_from_email": "news@example.com",
		"optin_template_id": tpl.Id})
	require.Equal(t, &tpl.Id, l.OptinTemplateId)
	res = o.form(o.pubA, "192.0.2.1:1", url.Values{"email": {"dee@example.com"}, "name": {"Dee"}, "list_ids": {itoa(l.Id)}})
	require.Equal(t, http.StatusOK, res.Status)
	var subject, text, link string
	require.NoError(t, o.pool.QueryRow(context.Background(), `SELECT subject, text, data->>'confirm_url' FROM messages
		WHERE to_email = 'dee@example.com'`).Scan(&subject, &text, &link))
	require.Equal(t, "Confirm, {{.Name}}", subject, "the template's content, rendered at send time")
	require.Contains(t, text, "{{.Attributes.confirm_url}}")
	require.Regexp(t, `^https://mail\.example\.com/p/confirm/[A-Za-z0-9_-]+$`, link)

	res = o.do(o.keyB, "PATCH", "/v1/lists/"+itoa(l.Id), map[string]any{"optin_template_id": nil})
	require.Equal(t, http.StatusNotFound, res.Status)
	res = o.do(o.keyA, "PATCH", "/v1/lists/"+itoa(l.Id), map[string]any{"optin_template_id": nil})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.Nil(t, decodeAs[api.List](t, res).OptinTemplateId)
	// A double opt-in list cannot lose its From address.
	res = o.do(o.keyA, "PATCH", "/v1/lists/"+itoa(l.Id), map[string]any{"optin_from_email": ""})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), "/optin_from_email")
	require.Equal(t, "news@example.com", decodeAs[api.List](t, o.do(o.keyA, "GET", "/v1/lists/"+itoa(l.Id), nil)).OptinFromEmail)
}
