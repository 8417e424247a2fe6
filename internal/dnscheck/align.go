package dnscheck

import (
	"strings"

	"golang.org/x/net/publicsuffix"
)

// DMARC passes when SPF or DKIM passes for a domain aligned with the From domain
// (RFC 7489 §3.1): SPF is checked for the envelope sender (the Return-Path, the
// SMTP MAIL FROM), DKIM for the signature's d= domain. Relaxed alignment (the
// default) asks that the two share the organizational domain; strict (aspf=s,
// adkim=s in the DMARC record) that they are equal.

// Alignment is how one of SPF or DKIM lines up with the From domain.
type Alignment struct {
	// Domain is the envelope sender's domain (SPF) or the signing d= domain (DKIM).
	Domain string
	// Strict: the DMARC record asks for strict alignment (aspf=s / adkim=s).
	Strict bool
	// Aligned: Domain aligns with From as the mode asks.
	Aligned bool
	// Authorized (SPF only): the envelope domain's SPF record names the sender's
	// provider (its documented include, or the mechanism given); nil when it
	// cannot be told (no record, or no provider mechanism known or given) or
	// does not matter (the envelope domain does not align).
	Authorized *bool
	// Detail says what was found, in a sentence.
	Detail string
}

// OrgDomain is the organizational domain of d (RFC 7489 §3.2): the public suffix
// and one label more, from the Public Suffix List; d itself when it has none.
func OrgDomain(d string) string {
	if org, err := publicsuffix.EffectiveTLDPlusOne(d); err == nil {
		return org
	}
	return d
}

// aligned reports whether id aligns with from, strictly or relaxed.
func aligned(id, from string, strict bool) bool {
	if strict {
		return id == from
	}
	return OrgDomain(id) == OrgDomain(from)
}

// envelopeDomain is the Return-Path domain a sender of kind uses for mail From d
// when none is configured with the provider: the From domain itself for SMTP
// (sendonce gives the From address as MAIL FROM) and Mailgun (bounces go to the
// sending domain), the "send." subdomain Resend's domain setup publishes, and the
// provider's own bounce domain for the others until a custom one is set up.
func envelopeDomain(kind, d string) string {
	switch kind {
	case "resend":
		return "send." + d
	case "sendgrid":
		return "sendgrid.net"
	case "postmark":
		return "pm.mtasv.net"
	case "ses":
		return "amazonses.com"
	}
	return d
}

// customEnvelope is the Return-Path subdomain to set up with the provider when
// its default one does not align.
func customEnvelope(kind, d string) string {
	switch kind {
	case "postmark":
		return "pm-bounces." + d
	case "ses":
		return "mail." + d
	case "sendgrid":
		return "em." + d
	}
	return "bounce." + d
}

// authorizes reports whether the SPF record names mech (a mechanism such as
// "include:amazonses.com" or "ip4:192.0.2.1"), with any qualifier but "-" and
// "~". Only the record's own mechanisms are read: an include is not followed.
func authorizes(record, mech string) bool {
	mech = strings.ToLower(mech)
	for _, term := range strings.Fields(strings.ToLower(record))[1:] {
		if strings.TrimPrefix(term, "+") == mech || strings.TrimPrefix(term, "?") == mech {
			return true
		}
	}
	return false
}

// spfAlignment judges the SPF found at the envelope domain env for mail From d.
func spfAlignment(spf Check, env, d, mech string, strict bool) Alignment {
	a := Alignment{Domain: env, Strict: strict, Aligned: aligned(env, d, strict)}
	// The provider's own bounce domain has its own SPF, which cannot name the
	// tenant's mechanism and does not count for DMARC: not judged.
	if spf.Status == Pass && mech != "" && a.Aligned {
		ok := authorizes(spf.Records[0], mech)
		a.Authorized = &ok
	}
	mode := modeName(strict)
	switch {
	case !a.Aligned:
		a.Detail = "the envelope sender (Return-Path) " + env + " does not align with " + d + " (" + mode + "): SPF cannot pass DMARC for this From"
	case a.Authorized != nil && !*a.Authorized:
		a.Detail = "the SPF record at " + env + " does not name " + mech + ": the provider's servers are not authorized"
	case spf.Status != Pass:
		a.Detail = "the envelope sender " + env + " aligns with " + d + " (" + mode + ") but has no valid SPF record"
	case a.Authorized == nil:
		a.Detail = "the envelope sender " + env + " aligns with " + d + " (" + mode + "); which mechanism authorizes your provider is not known: give spf_include"
	default:
		a.Detail = "the envelope sender " + env + " aligns with " + d + " (" + mode + ") and its SPF record names " + mech
	}
	return a
}

// dkimAlignment judges the signing domain sd for mail From d.
func dkimAlignment(dkim Check, sd, d string, strict bool) Alignment {
	a := Alignment{Domain: sd, Strict: strict, Aligned: aligned(sd, d, strict)}
	mode := modeName(strict)
	switch {
	case !a.Aligned:
		a.Detail = "the DKIM signing domain (d=) " + sd + " does not align with " + d + " (" + mode + ")"
	case dkim.Status != Pass:
		a.Detail = "the DKIM signing domain (d=) " + sd + " aligns with " + d + " (" + mode + ") but no key was found under it"
	default:
		a.Detail = "the DKIM signing domain (d=) " + sd + " aligns with " + d + " (" + mode + ")"
	}
	return a
}

func modeName(strict bool) string {
	if strict {
		return "strict"
	}
	return "relaxed"
}

// withMechanism is the SPF record with mech added before its final "all" (or at
// its end when it has none).
func withMechanism(record, mech string) string {
	f := strings.Fields(record)
	if last := strings.ToLower(f[len(f)-1]); strings.HasSuffix(last, "all") && len(last) <= 4 {
		return strings.Join(append(f[:len(f)-1:len(f)-1], mech, f[len(f)-1]), " ")
	}
	return strings.Join(append(f, mech), " ")
}
