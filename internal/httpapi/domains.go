package httpapi

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dnscheck"
)

func toAPIDomainCheck(r dnscheck.Result) api.DomainCheck {
	rec := func(c dnscheck.Check) api.DomainRecordCheck {
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
	align := func(a dnscheck.Alignment) api.DomainAlignment {
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

// spfMechanismRe is one SPF mechanism with its argument (RFC 7208 §5): the
// caller's name for what authorizes their provider, compared, never queried.
var spfMechanismRe = regexp.MustCompile(`^(?i)(include|a|mx|ip4|ip6|exists):[^\s]{1,250}$`)

// senderKind is the type of the account's sender id names (422 naming pointer
// when it is not one of the account's), or of the account's default sender
// when id is nil ("" when there is none: the environment's provider).
func (s *Server) senderKind(ctx context.Context, accountID int64, id *int64, pointer string) (string, error) {
	kind, found, err := s.Senders.KindFor(ctx, accountID, id)
	if err == nil && !found {
		return "", apperr.Invalidf(pointer, "sender %d not found", *id)
	}
	return kind, err
}

// checkDomain answers POST /v1/domains/check.
func (s *Server) checkDomain(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.DomainCheckRequest](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	d := in.Domain
	if at := strings.LastIndexByte(d, '@'); at >= 0 {
		d = d[at+1:]
	}
	if _, err := dnscheck.Normalize(d); err != nil {
		return apperr.Invalidf("/domain", "%s", err.Error())
	}
	o := dnscheck.Options{}
	for _, f := range []struct {
		v       *string
		to      *string
		pointer string
	}{{in.EnvelopeDomain, &o.EnvelopeDomain, "/envelope_domain"}, {in.DkimDomain, &o.DKIMDomain, "/dkim_domain"}} {
		if f.v == nil {
			continue
		}
		if _, err := dnscheck.Normalize(*f.v); err != nil {
			return apperr.Invalidf(f.pointer, "%s", err.Error())
		}
		*f.to = *f.v
	}
	if in.SpfInclude != nil {
		if !spfMechanismRe.MatchString(*in.SpfInclude) {
			return apperr.Invalidf("/spf_include", "spf_include must be one SPF mechanism with its argument, such as include:_spf.example.net or ip4:192.0.2.1")
		}
		o.SPFMechanism = *in.SpfInclude
	}
	if in.DkimSelector != nil {
		if !dnscheck.ValidSelector(*in.DkimSelector) {
			return apperr.Invalidf("/dkim_selector", "dkim_selector must be DNS labels (letters, digits, hyphens, dots)")
		}
		o.Selectors = []string{*in.DkimSelector}
	}
	kind, err := s.senderKind(r.Context(), accountID(r), in.SenderId, "/sender_id")
	if err != nil {
		return err
	}
	o.Kind = kind
	// The account's own keys: the active one's selector is where its mail's
	// signatures point, so that is the DKIM key to check.
	keys, active, err := s.accountDkimKeys(r.Context(), accountID(r), d)
	if err != nil {
		return err
	}
	if active != "" && in.DkimSelector == nil && o.DKIMDomain == "" {
		o.Selectors = []string{active}
	}
	res, err := s.Domains.Check(r.Context(), d, o)
	if err != nil {
		return err
	}
	out := toAPIDomainCheck(res)
	out.DkimKeys = s.dkimKeyChecks(r.Context(), keys)
	return encode(w, http.StatusOK, out)
}

// approvalDomainCheck checks the From domain of campaign id before approval, as
// SENDONCE_DOMAIN_CHECK says: nil when off; with refuse, a failing domain is a
// 422 naming /from_email that carries the check. A lookup that could not be made
// (the resolver did not answer) does not refuse: it is reported, not held against
// the campaign. It also returns the From and sender it checked, for the approval
// to hold the campaign to (the lookups run before the approve transaction, so an
// edit can commit in between).
func (s *Server) approvalDomainCheck(ctx context.Context, accountID, id int64) (*api.DomainCheck, *campaign.Checked, error) {
	mode := s.opts.DomainCheck
	if mode == "" || mode == "off" {
		return nil, nil, nil
	}
	c, err := s.Campaigns.Get(ctx, accountID, id)
	if err != nil {
		return nil, nil, err
	}
	checked := &campaign.Checked{FromEmail: c.FromEmail, SenderID: c.SenderID}
	d := c.FromEmail[strings.LastIndexByte(c.FromEmail, '@')+1:]
	kind, err := s.senderKind(ctx, accountID, c.SenderID, "/sender_id")
	if err != nil {
		return nil, nil, err
	}
	res, err := s.Domains.Check(ctx, d, dnscheck.Options{Kind: kind})
	if err != nil {
		// Not a public domain: it cannot pass.
		res = dnscheck.Result{Domain: d, SPF: dnscheck.Check{Status: dnscheck.Invalid, Detail: err.Error()},
			DKIM: dnscheck.Check{Status: dnscheck.Invalid, Detail: err.Error()}, DMARC: dnscheck.Check{Status: dnscheck.Invalid, Detail: err.Error()}}
	}
	out := toAPIDomainCheck(res)
	if mode == "refuse" && !res.OK && res.SPF.Status != dnscheck.Unknown && res.DKIM.Status != dnscheck.Unknown &&
		res.DMARC.Status != dnscheck.Unknown && c.Status == campaign.StatusDraft {
		e := apperr.Invalidf("/from_email", "the From domain %s does not pass SPF, DKIM and DMARC (aligned): see domain_check for what to publish", res.Domain)
		e.Extra = map[string]any{"domain_check": out}
		return nil, nil, e
	}
	return &out, checked, nil
}
