package dnscheck_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dnscheck"
)

// DMARC alignment: SPF counts for the envelope sender's domain and DKIM for the
// signing domain, each aligned with From relaxed (same organizational domain)
// or strict (aspf=s / adkim=s: the same domain).
func TestDomainCheckAlignment(t *testing.T) {
	t.Parallel()
	s := startDNS(t, map[string][]string{
		"shop.com.":                          {"v=spf1 include:amazonses.com -all"},
		"_dmarc.shop.com.":                   {"v=DMARC1; p=reject"},
		"resend._domainkey.shop.com.":        {"v=DKIM1; p=KEY"},
		"send.shop.com.":                     {"v=spf1 include:amazonses.com ~all"},
		"bounce.shop.com.":                   {"v=spf1 ip4:192.0.2.1 ~all"},
		"strict.com.":                        {"v=spf1 include:amazonses.com -all"},
		"_dmarc.strict.com.":                 {"v=DMARC1; p=none; aspf=s; adkim=s"},
		"send.strict.com.":                   {"v=spf1 include:amazonses.com ~all"},
		"resend._domainkey.strict.com.":      {"v=DKIM1; p=KEY"},
		"s1._domainkey.mail.strict.com.":     {"v=DKIM1; p=KEY"},
		"resend._domainkey.shop.co.uk.":      {"v=DKIM1; p=KEY"},
		"send.shop.co.uk.":                   {"v=spf1 include:amazonses.com ~all"},
		"_dmarc.shop.co.uk.":                 {"v=DMARC1; p=none"},
		"s1._domainkey.sendgrid-tenant.com.": {"v=DKIM1; p=KEY"},
	})
	c := checker(s)
	ctx := context.Background()

	// Resend's envelope is send.<domain>: relaxed-aligned, its SPF names Resend's include.
	r, err := c.Check(ctx, "shop.com", dnscheck.Options{Kind: "resend"})
	require.NoError(t, err)
	require.Equal(t, "send.shop.com", r.SPFAlignment.Domain)
	require.Equal(t, dnscheck.Pass, r.SPF.Status, r.SPF.Detail)
	require.True(t, r.SPFAlignment.Aligned, r.SPFAlignment.Detail)
	require.False(t, r.SPFAlignment.Strict)
	require.NotNil(t, r.SPFAlignment.Authorized)
	require.True(t, *r.SPFAlignment.Authorized)
	require.Equal(t, "shop.com", r.DKIMAlignment.Domain)
	require.True(t, r.DKIMAlignment.Aligned)
	require.True(t, r.Aligned)
	require.True(t, r.OK)
	require.Empty(t, r.Publish)

	// SES without a custom MAIL FROM bounces to amazonses.com: not aligned, and
	// the fix is a custom Return-Path under the From domain. No DKIM selector is
	// known for SES either, so nothing aligns.
	r, err = c.Check(ctx, "shop.com", dnscheck.Options{Kind: "ses"})
	require.NoError(t, err)
	require.Equal(t, "amazonses.com", r.SPFAlignment.Domain)
	require.False(t, r.SPFAlignment.Aligned)
	require.Nil(t, r.SPFAlignment.Authorized, "the provider's own domain is not judged")
	require.Contains(t, r.SPFAlignment.Detail, "does not align")
	require.False(t, r.Aligned)
	require.False(t, r.OK)
	require.Equal(t, dnscheck.Record{Type: "TXT", Name: "mail.shop.com", Value: "v=spf1 include:amazonses.com ~all", Why: r.Publish[0].Why}, r.Publish[0])

	// An aligned envelope whose SPF does not name the provider: not authorized,
	// and the record to publish is the one found with the include added.
	r, err = c.Check(ctx, "shop.com", dnscheck.Options{Kind: "resend", EnvelopeDomain: "bounce.shop.com"})
	require.NoError(t, err)
	require.True(t, r.SPFAlignment.Aligned)
	require.NotNil(t, r.SPFAlignment.Authorized)
	require.False(t, *r.SPFAlignment.Authorized, r.SPFAlignment.Detail)
	require.True(t, r.Aligned, "DKIM still aligns")
	require.Equal(t, dnscheck.Record{Type: "TXT", Name: "bounce.shop.com", Value: "v=spf1 ip4:192.0.2.1 include:amazonses.com ~all", Why: r.Publish[0].Why}, r.Publish[0])

	// The same envelope with the mechanism the caller gives: authorized; with
	// no DKIM selector found, SPF alone carries the alignment.
	r, err = c.Check(ctx, "shop.com", dnscheck.Options{Kind: "smtp", EnvelopeDomain: "bounce.shop.com", SPFMechanism: "IP4:192.0.2.1", Selectors: []string{"none"}})
	require.NoError(t, err)
	require.True(t, *r.SPFAlignment.Authorized)
	require.Equal(t, dnscheck.Missing, r.DKIM.Status)
	require.True(t, r.Aligned, "SPF aligned and authorized")
	require.False(t, r.OK, "DKIM is still required")

	// SMTP with no mechanism known: whether SPF authorizes the relay cannot be told.
	r, err = c.Check(ctx, "shop.com", dnscheck.Options{Kind: "smtp"})
	require.NoError(t, err)
	require.Equal(t, "shop.com", r.SPFAlignment.Domain)
	require.Nil(t, r.SPFAlignment.Authorized)
	require.Contains(t, r.SPFAlignment.Detail, "spf_include")

	// aspf=s: send.strict.com no longer aligns with strict.com; DKIM d=strict.com does.
	r, err = c.Check(ctx, "strict.com", dnscheck.Options{Kind: "resend"})
	require.NoError(t, err)
	require.True(t, r.SPFAlignment.Strict)
	require.False(t, r.SPFAlignment.Aligned, r.SPFAlignment.Detail)
	require.True(t, r.DKIMAlignment.Strict)
	require.True(t, r.DKIMAlignment.Aligned)
	require.True(t, r.Aligned)
	// adkim=s and a signing subdomain: the key is found but does not align.
	r, err = c.Check(ctx, "strict.com", dnscheck.Options{Kind: "resend", DKIMDomain: "mail.strict.com", Selectors: []string{"s1"}})
	require.NoError(t, err)
	require.Equal(t, dnscheck.Pass, r.DKIM.Status, r.DKIM.Detail)
	require.Equal(t, "mail.strict.com", r.DKIMAlignment.Domain)
	require.False(t, r.DKIMAlignment.Aligned, r.DKIMAlignment.Detail)
	require.False(t, r.Aligned)
	require.False(t, r.OK)

	// Relaxed alignment is by organizational domain from the Public Suffix List:
	// shop.co.uk's subdomains align with it; another name under co.uk does not.
	r, err = c.Check(ctx, "shop.co.uk", dnscheck.Options{Kind: "resend"})
	require.NoError(t, err)
	require.True(t, r.SPFAlignment.Aligned)
	require.True(t, r.OK, "%+v", r)
	r, err = c.Check(ctx, "shop.co.uk", dnscheck.Options{Kind: "resend", DKIMDomain: "sendgrid-tenant.com", Selectors: []string{"s1"}, EnvelopeDomain: "other.co.uk"})
	require.NoError(t, err)
	require.Equal(t, dnscheck.Pass, r.DKIM.Status)
	require.False(t, r.DKIMAlignment.Aligned)
	require.False(t, r.SPFAlignment.Aligned)
	require.Equal(t, "shop.co.uk", dnscheck.OrgDomain("a.b.shop.co.uk"))
	require.Equal(t, "shop.com", dnscheck.OrgDomain("send.shop.com"))

	// The envelope and signing domains are held to public names like the From domain.
	_, err = c.Check(ctx, "shop.com", dnscheck.Options{EnvelopeDomain: "bounce.internal"})
	require.ErrorIs(t, err, dnscheck.ErrNotPublic)
	_, err = c.Check(ctx, "shop.com", dnscheck.Options{DKIMDomain: "localhost"})
	require.ErrorIs(t, err, dnscheck.ErrNotPublic)
}
