package httpapi_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dnscheck/dnschecktest"
)

// localDNS answers TXT queries from zone and counts the queries; it is the only
// resolver the server under test may use (SENDONCE_DNS_SERVER).
func localDNS(t *testing.T, zone map[string][]string) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	return dnschecktest.Serve(t, zone, func(string) { n.Add(1) }), &n
}

var testZone = map[string][]string{
	"good.com.":                   {"v=spf1 include:amazonses.com ~all", "internal-secret=do-not-echo"},
	"resend._domainkey.good.com.": {"v=DKIM1; p=MIGfMA0GCSqGSIb3"},
	"_dmarc.good.com.":            {"v=DMARC1; p=none"},
	"bad.com.":                    {"v=spf1 +all"},
	"send.good.com.":              {"v=spf1 include:amazonses.com ~all"},
	"bounce.good.com.":            {"v=spf1 ip4:192.0.2.7 -all"},
	"_dmarc.strict.com.":          {"v=DMARC1; p=reject; aspf=s"},
}

func TestDomainCheckRoute(t *testing.T) {
	t.Parallel()
	addr, n := localDNS(t, testZone)
	e := setup(t, func(c *config.Config) { c.DNSServer = addr })
	res := e.do(e.keyA, "POST", "/v1/domains/check", map[string]any{"domain": "news@Good.com", "dkim_selector": "resend"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got := decodeAs[api.DomainCheck](t, res)
	require.Equal(t, "good.com", got.Domain)
	require.True(t, got.Ok)
	require.True(t, got.Aligned)
	require.Equal(t, []string{"v=spf1 include:amazonses.com ~all"}, got.Spf.Records)
	require.NotContains(t, string(res.Body), "internal-secret", "only SPF, DKIM and DMARC records are echoed")
	require.Empty(t, got.Publish)

	res = e.do(e.keyA, "POST", "/v1/domains/check", map[string]any{"domain": "bad.com"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got = decodeAs[api.DomainCheck](t, res)
	require.False(t, got.Ok)
	require.Equal(t, api.DomainRecordCheckStatus("invalid"), got.Spf.Status)
	require.Len(t, got.Publish, 3)

	// The envelope domain and the provider's mechanism, as the caller gives them.
	res = e.do(e.keyA, "POST", "/v1/domains/check", map[string]any{"domain": "good.com", "dkim_selector": "resend",
		"envelope_domain": "bounce.good.com", "spf_include": "ip4:192.0.2.7"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got = decodeAs[api.DomainCheck](t, res)
	require.Equal(t, api.DomainAlignment{Domain: "bounce.good.com", Mode: "relaxed", Aligned: true, Authorized: func() *bool { b := true; return &b }(), Detail: got.SpfAlignment.Detail}, got.SpfAlignment)
	require.Equal(t, "good.com", got.DkimAlignment.Domain)
	require.True(t, got.DkimAlignment.Aligned)
	require.True(t, got.Ok)
	res = e.do(e.keyA, "POST", "/v1/domains/check", map[string]any{"domain": "strict.com", "envelope_domain": "bounce.strict.com", "dkim_domain": "good.com"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got = decodeAs[api.DomainCheck](t, res)
	require.Equal(t, api.DomainAlignmentMode("strict"), got.SpfAlignment.Mode)
	require.False(t, got.SpfAlignment.Aligned)
	require.False(t, got.DkimAlignment.Aligned, "good.com signs, not strict.com")
	require.False(t, got.Aligned)

	// Account B's sender is no sender of account A's.
	res = e.do(e.keyB, "POST", "/v1/senders", map[string]any{"name": "h", "type": "http", "settings": map[string]any{"url": "https://h.example"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	bSender := int64(decodeAs[map[string]any](t, res)["id"].(float64))
	before := n.Load()
	for _, c := range []struct {
		body    map[string]any
		pointer string
	}{
		{map[string]any{"domain": "good.com", "sender_id": bSender}, "/sender_id"},
		{map[string]any{"domain": "localhost"}, "/domain"},
		{map[string]any{"domain": "db.internal"}, "/domain"},
		{map[string]any{"domain": "10.0.0.1"}, "/domain"},
		{map[string]any{"domain": "printer.local"}, "/domain"},
		{map[string]any{"domain": "a.com\r\n"}, "/domain"},
		{map[string]any{"domain": "good.com", "dkim_selector": "x/../y"}, "/dkim_selector"},
		{map[string]any{"domain": "good.com", "dkim_selector": "a b"}, "/dkim_selector"},
		{map[string]any{"domain": "good.com", "resolver": "10.0.0.1:53"}, "/resolver"},
		{map[string]any{"domain": "good.com", "envelope_domain": "bounce.internal"}, "/envelope_domain"},
		{map[string]any{"domain": "good.com", "dkim_domain": "127.0.0.1"}, "/dkim_domain"},
		{map[string]any{"domain": "good.com", "spf_include": "include"}, "/spf_include"},
		{map[string]any{"domain": "good.com", "spf_include": "redirect=x.com"}, "/spf_include"},
		{map[string]any{"domain": "good.com", "spf_include": "include:a b"}, "/spf_include"},
		{map[string]any{}, "/domain"},
	} {
		res := e.do(e.keyA, "POST", "/v1/domains/check", c.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", c.body, res.Body)
		require.Contains(t, decodeAs[problem](t, res).pointers(), c.pointer, "%v: %s", c.body, res.Body)
	}
	require.Equal(t, before, n.Load(), "refused requests ask the resolver nothing")
}

// Approval checks the From domain: warn approves and reports, refuse keeps a
// failing campaign a draft with a 422 naming /from_email.
func TestApprovalDomainCheck(t *testing.T) {
	t.Parallel()
	addr, _ := localDNS(t, testZone)
	draft := func(e *env, from string) string {
		res := e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "s", "from_email": from, "text_template": "hi"})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		return itoa(decodeAs[api.Campaign](t, res).Id)
	}
	warn := setup(t, func(c *config.Config) { c.DNSServer, c.DomainCheck = addr, "warn" })
	id := draft(warn, "news@bad.com")
	res := warn.do(warn.keyA, "POST", "/v1/campaigns/"+id+"/approve", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	c := decodeAs[api.Campaign](t, res)
	require.Equal(t, api.CampaignStatus("approved"), c.Status)
	require.NotNil(t, c.DomainCheck)
	require.False(t, c.DomainCheck.Ok)

	refuse := setup(t, func(c *config.Config) { c.DNSServer, c.DomainCheck = addr, "refuse" })
	id = draft(refuse, "news@bad.com")
	res = refuse.do(refuse.keyA, "POST", "/v1/campaigns/"+id+"/approve", nil)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/from_email"}, decodeAs[problem](t, res).pointers())
	require.Contains(t, string(res.Body), `"domain_check"`)
	res = refuse.do(refuse.keyA, "GET", "/v1/campaigns/"+id, nil)
	require.Equal(t, api.CampaignStatus("draft"), decodeAs[api.Campaign](t, res).Status)
	require.Equal(t, http.StatusNotFound, refuse.do(refuse.keyB, "POST", "/v1/campaigns/"+id+"/approve", nil).Status)

	res = refuse.do(refuse.keyA, "POST", "/v1/senders", map[string]any{"name": "r", "type": "resend",
		"credentials": map[string]any{"api_key": "re_123456789"}, "default": true})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	id = draft(refuse, "news@good.com")
	res = refuse.do(refuse.keyA, "POST", "/v1/campaigns/"+id+"/approve", nil)
	require.Equal(t, http.StatusOK, res.Status, "resend's selector found through the default sender: %s", res.Body)
	require.True(t, decodeAs[api.Campaign](t, res).DomainCheck.Ok)
}
