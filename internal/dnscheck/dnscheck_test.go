package dnscheck_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dnscheck"
	"github.com/sendonce/sendonce/internal/dnscheck/dnschecktest"
)

// dnsServer is a local authoritative-looking server answering TXT from zone
// (name → records; a record of several strings is split on "|"), NXDOMAIN
// otherwise, and recording every name asked.
type dnsServer struct {
	addr  string
	mu    sync.Mutex
	asked []string
	n     atomic.Int32
}

func startDNS(t *testing.T, zone map[string][]string) *dnsServer {
	t.Helper()
	s := &dnsServer{}
	s.addr = dnschecktest.Serve(t, zone, func(name string) {
		s.mu.Lock()
		s.asked = append(s.asked, name)
		s.mu.Unlock()
		s.n.Add(1)
	})
	return s
}

func checker(s *dnsServer) *dnscheck.Checker {
	return &dnscheck.Checker{Resolver: dnscheck.NewResolver(s.addr), Timeout: 5 * time.Second}
}

func TestDomainCheckPasses(t *testing.T) {
	t.Parallel()
	s := startDNS(t, map[string][]string{
		"good.com.":                            {"google-site-verification=abc", "v=spf1 include:amazonses.com ~all"},
		"send.good.com.":                       {"v=spf1 include:amazonses.com ~all"},
		"send.mail.sub.good.com.":              {"v=spf1 include:amazonses.com ~all"},
		"resend._domainkey.good.com.":          {"p=MIGfMA0GCSqGSIb3DQEB|AQUAA4GNADCBiQKBgQC"},
		"_dmarc.good.com.":                     {"v=DMARC1; p=quarantine; rua=mailto:d@good.com"},
		"mail.sub.good.com.":                   {"v=spf1 -all"},
		"resend._domainkey.mail.sub.good.com.": {"v=DKIM1; k=rsa; p=KEY"},
	})
	c := checker(s)
	r, err := c.Check(context.Background(), "Good.COM.", dnscheck.Options{Kind: "resend"})
	require.NoError(t, err)
	require.Equal(t, "good.com", r.Domain)
	require.Equal(t, dnscheck.Pass, r.SPF.Status, r.SPF.Detail)
	require.Equal(t, []string{"v=spf1 include:amazonses.com ~all"}, r.SPF.Records, "only SPF records are echoed")
	require.Equal(t, dnscheck.Pass, r.DKIM.Status, r.DKIM.Detail)
	require.Equal(t, "resend", r.DKIM.Selector)
	require.Equal(t, dnscheck.Pass, r.DMARC.Status)
	require.Equal(t, "quarantine", r.DMARCPolicy)
	require.True(t, r.Aligned)
	require.True(t, r.OK)
	require.Empty(t, r.Publish)

	// A subdomain without its own DMARC falls back to the organizational domain's.
	r, err = c.Check(context.Background(), "mail.sub.good.com", dnscheck.Options{Kind: "resend"})
	require.NoError(t, err)
	require.Equal(t, dnscheck.Pass, r.DMARC.Status, r.DMARC.Detail)
	require.True(t, r.OK)
}

func TestDomainCheckSaysWhatToPublish(t *testing.T) {
	t.Parallel()
	s := startDNS(t, map[string][]string{
		"bare.com.":                 {"some other text"},
		"twospf.com.":               {"v=spf1 a ~all", "v=spf1 mx ~all"},
		"_dmarc.twospf.com.":        {"v=DMARC1; p=bogus"},
		"s1._domainkey.twospf.com.": {"v=DKIM1; p="},
		"open.com.":                 {"v=spf1 +all"},
	})
	c := checker(s)
	r, err := c.Check(context.Background(), "bare.com", dnscheck.Options{Kind: "sendgrid", EnvelopeDomain: "bare.com"})
	require.NoError(t, err)
	require.Equal(t, dnscheck.Missing, r.SPF.Status)
	require.Empty(t, r.SPF.Records, "TXT records that are not SPF are never echoed")
	require.Equal(t, dnscheck.Missing, r.DKIM.Status)
	require.Equal(t, dnscheck.Missing, r.DMARC.Status)
	require.False(t, r.OK)
	require.Equal(t, []dnscheck.Record{
		{Type: "TXT", Name: "bare.com", Value: "v=spf1 include:sendgrid.net ~all", Why: r.Publish[0].Why},
		{Type: "TXT or CNAME", Name: "s1._domainkey.bare.com", Value: r.Publish[1].Value, Why: r.Publish[1].Why},
		{Type: "TXT", Name: "_dmarc.bare.com", Value: "v=DMARC1; p=none; rua=mailto:dmarc-reports@bare.com", Why: r.Publish[2].Why},
	}, r.Publish)

	r, err = c.Check(context.Background(), "twospf.com", dnscheck.Options{Kind: "sendgrid", EnvelopeDomain: "twospf.com"})
	require.NoError(t, err)
	require.Equal(t, dnscheck.Invalid, r.SPF.Status, "two SPF records are a permerror")
	require.Equal(t, dnscheck.Invalid, r.DKIM.Status, "revoked key")
	require.Equal(t, dnscheck.Invalid, r.DMARC.Status, "no valid p=")

	r, err = c.Check(context.Background(), "open.com", dnscheck.Options{Selectors: []string{"custom"}})
	require.NoError(t, err)
	require.Equal(t, dnscheck.Invalid, r.SPF.Status, "+all")
	require.Equal(t, "custom", r.DKIM.Selector)
}

// Names that are not public domains are refused before any query: a tenant
// cannot make the resolver look up internal names.
func TestDomainCheckRefusesNonPublicNames(t *testing.T) {
	t.Parallel()
	s := startDNS(t, nil)
	c := checker(s)
	for _, d := range []string{"", "localhost", "db", "printer.local", "vault.internal", "x.home.arpa", "1.0.0.127.in-addr.arpa",
		"127.0.0.1", "[::1]", "10.0.0.1", "com", "co.uk", "a..com", "-a.com", "a_b.com", "exa mple.com", "x.test", "x.example",
		"corp", "foo.corp", "foo.lan", strings.Repeat("a", 64) + ".com", "évil.com", "a.com\x00.internal", " a.com", "a.com\n"} {
		_, err := c.Check(context.Background(), d, dnscheck.Options{})
		require.ErrorIs(t, err, dnscheck.ErrNotPublic, "%q", d)
	}
	require.Zero(t, s.n.Load(), "no query was sent")
	require.False(t, dnscheck.ValidSelector("a/b"))
	require.False(t, dnscheck.ValidSelector("x._domainkey.evil.com.."))
	require.True(t, dnscheck.ValidSelector("20240101pm"))
	require.True(t, dnscheck.ValidSelector("s1.sub"))
}

// A resolver that does not answer gives Unknown, within the timeout, and the
// result is not cached; a result that answered is cached.
func TestDomainCheckUnknownAndCache(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0") // never answers
	require.NoError(t, err)
	t.Cleanup(func() { pc.Close() })
	c := &dnscheck.Checker{Resolver: dnscheck.NewResolver(pc.LocalAddr().String()), Timeout: 300 * time.Millisecond, CacheTTL: time.Minute}
	r, err := c.Check(context.Background(), "silent.com", dnscheck.Options{Kind: "resend"})
	require.NoError(t, err)
	require.Equal(t, dnscheck.Unknown, r.SPF.Status)
	require.False(t, r.OK)

	s := startDNS(t, map[string][]string{"cached.com.": {"v=spf1 -all"}})
	c = &dnscheck.Checker{Resolver: dnscheck.NewResolver(s.addr), CacheTTL: time.Minute}
	_, err = c.Check(context.Background(), "cached.com", dnscheck.Options{Kind: "resend"})
	require.NoError(t, err)
	n := s.n.Load()
	_, err = c.Check(context.Background(), "cached.com", dnscheck.Options{Kind: "resend"})
	require.NoError(t, err)
	require.Equal(t, n, s.n.Load(), "answered from the cache")
}
