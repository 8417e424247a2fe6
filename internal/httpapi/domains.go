package httpapi

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/optional"
)

// DomainChecker checks sending domains' SPF, DKIM and DMARC in api types
// (dnscheck.API).
type DomainChecker interface {
	// Normalize is domain in the form it is checked in; the error says why it is
	// not a public domain name.
	Normalize(domain string) (string, error)
	// ValidSelector reports whether s is DNS labels.
	ValidSelector(s string) bool
	// Check checks domain with the envelope domain, DKIM domain and SPF mechanism
	// in asks, for a sender of kind and the DKIM selectors given (nil: the kind's
	// usual ones).
	Check(ctx context.Context, domain string, in api.DomainCheckRequest, kind string, selectors []string) (api.DomainCheck, error)
	// Approval checks the From domain of a campaign about to be approved: a
	// domain that is not public fails every check.
	Approval(ctx context.Context, domain, kind string) api.DomainCheck
	// DKIMRecords are the DKIM records published at selector._domainkey.domain.
	DKIMRecords(ctx context.Context, selector, domain string) ([]string, error)
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
	if _, err := s.Domains.Normalize(d); err != nil {
		return apperr.Invalidf("/domain", "%s", err.Error())
	}
	for _, f := range []struct {
		v       *string
		pointer string
	}{{in.EnvelopeDomain, "/envelope_domain"}, {in.DkimDomain, "/dkim_domain"}} {
		if f.v == nil {
			continue
		}
		if _, err := s.Domains.Normalize(*f.v); err != nil {
			return apperr.Invalidf(f.pointer, "%s", err.Error())
		}
	}
	if in.SpfInclude != nil {
		if !spfMechanismRe.MatchString(*in.SpfInclude) {
			return apperr.Invalidf("/spf_include", "spf_include must be one SPF mechanism with its argument, such as include:_spf.example.net or ip4:192.0.2.1")
		}
	}
	var selectors []string
	if in.DkimSelector != nil {
		if !s.Domains.ValidSelector(*in.DkimSelector) {
			return apperr.Invalidf("/dkim_selector", "dkim_selector must be DNS labels (letters, digits, hyphens, dots)")
		}
		selectors = []string{*in.DkimSelector}
	}
	kind, err := s.senderKind(r.Context(), accountID(r), in.SenderId, "/sender_id")
	if err != nil {
		return err
	}
	// The account's own keys: the active one's selector is where its mail's
	// signatures point, so that is the DKIM key to check.
	keys, active, err := s.accountDkimKeys(r.Context(), accountID(r), d)
	if err != nil {
		return err
	}
	if active != "" && in.DkimSelector == nil && optional.Value(in.DkimDomain) == "" {
		selectors = []string{active}
	}
	out, err := s.Domains.Check(r.Context(), d, in, kind, selectors)
	if err != nil {
		return err
	}
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
	out := s.Domains.Approval(ctx, d, kind)
	if mode == "refuse" && !out.Ok && out.Spf.Status != api.DomainRecordCheckStatusUnknown &&
		out.Dkim.Status != api.DomainRecordCheckStatusUnknown && out.Dmarc.Status != api.DomainRecordCheckStatusUnknown &&
		c.Status == campaign.StatusDraft {
		e := apperr.Invalidf("/from_email", "the From domain %s does not pass SPF, DKIM and DMARC (aligned): see domain_check for what to publish", out.Domain)
		e.Extra = map[string]any{"domain_check": out}
		return nil, nil, e
	}
	return &out, checked, nil
}
