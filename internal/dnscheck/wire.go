package dnscheck

import (
	"context"

	"github.com/sendonce/sendonce/api"
)

// API is the Checker in the wire types of api/, as the HTTP API calls it.
type API struct{ *Checker }

// Normalize is domain in the form it is checked in (the package's Normalize);
// the error says why it is not a public domain name.
func (API) Normalize(domain string) (string, error) { return Normalize(domain) }

// ValidSelector reports whether s is DNS labels (the package's ValidSelector).
func (API) ValidSelector(s string) bool { return ValidSelector(s) }

// Check checks domain (Checker.Check) with the envelope domain, DKIM domain and
// SPF mechanism in asks, for a sender of kind and the DKIM selectors given (nil:
// the kind's usual ones).
func (a API) Check(ctx context.Context, domain string, in api.DomainCheckRequest, kind string, selectors []string) (api.DomainCheck, error) {
	o := Options{Kind: kind, Selectors: selectors}
	if in.EnvelopeDomain != nil {
		o.EnvelopeDomain = *in.EnvelopeDomain
	}
	if in.DkimDomain != nil {
		o.DKIMDomain = *in.DkimDomain
	}
	if in.SpfInclude != nil {
		o.SPFMechanism = *in.SpfInclude
	}
	res, err := a.Checker.Check(ctx, domain, o)
	if err != nil {
		return api.DomainCheck{}, err
	}
	return toAPIDomainCheck(res), nil
}

// Approval checks the From domain of a campaign about to be approved, sent by a
// sender of kind: a domain that is not public fails every check (its detail says
// why).
func (a API) Approval(ctx context.Context, domain, kind string) api.DomainCheck {
	res, err := a.Checker.Check(ctx, domain, Options{Kind: kind})
	if err != nil {
		// Not a public domain: it cannot pass.
		res = Result{Domain: domain, SPF: Check{Status: Invalid, Detail: err.Error()},
			DKIM: Check{Status: Invalid, Detail: err.Error()}, DMARC: Check{Status: Invalid, Detail: err.Error()}}
	}
	return toAPIDomainCheck(res)
}

func toAPIDomainCheck(r Result) api.DomainCheck {
	rec := func(c Check) api.DomainRecordCheck {
		out := api.DomainRecordCheck{Status: api.DomainRecordCheckStatus(c.Status), Records: c.Records, Detail: c.Detail}
		if out.Records == nil {
			out.Records = []string{}
		}
		if c.Selector != "" {
			out.Selector = &c.Selector
		}
		return out
	}
	pub := make([]struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Value string `json:"value"`
		Why   string `json:"why"`
	}, len(r.Publish))
	for i, p := range r.Publish {
		pub[i].Name, pub[i].Type, pub[i].Value, pub[i].Why = p.Name, p.Type, p.Value, p.Why
	}
	align := func(a Alignment) api.DomainAlignment {
		mode := api.DomainAlignmentMode("relaxed")
		if a.Strict {
			mode = "strict"
		}
		return api.DomainAlignment{Domain: a.Domain, Mode: mode, Aligned: a.Aligned, Authorized: a.Authorized, Detail: a.Detail}
	}
	return api.DomainCheck{Domain: r.Domain, Ok: r.OK, Aligned: r.Aligned, Spf: rec(r.SPF), Dkim: rec(r.DKIM),
		Dmarc: rec(r.DMARC), DmarcPolicy: r.DMARCPolicy, SpfAlignment: align(r.SPFAlignment),
		DkimAlignment: align(r.DKIMAlignment), Publish: pub, DkimKeys: []api.DomainCheckDkimKey{}}
}
