// Package bounce reads an account's bounce mailbox: the delivery status
// notifications (RFC 3464), complaint reports (RFC 5965) and auto-replies (RFC
// 3834) that come back to the VERP Return-Path its smtp senders put on each
// send. Each report is tied to its send only by the signed token in that
// address, never by what its body says, and applied through the same rules as
// a provider's webhook (internal/webhook): one gate per event, suppressions,
// events out.
package bounce

import (
	"encoding/binary"
	"strings"

	"github.com/sendonce/sendonce/internal/token"
)

// purpose is the HMAC domain of Return-Path tokens.
const purpose = "bounce"

// prefix is the local part before the token: bounces+<token>@<bounce domain>.
const prefix = "bounces+"

// VERP makes and reads the Return-Path addresses that name a send.
type VERP struct {
	ring *token.Ring
}

// NewVERP returns a VERP signing with ring (the deployment's token keys).
func NewVERP(ring *token.Ring) *VERP { return &VERP{ring: ring} }

// Address returns the Return-Path of the send sendID of accountID at domain:
// bounces+<token>@domain, the token binding both ids (about 40 octets of a
// local part's 64 for ids below 2^35).
func (v *VERP) Address(accountID, sendID int64, domain string) string {
	payload := binary.AppendUvarint(nil, uint64(accountID))
	payload = binary.AppendUvarint(payload, uint64(sendID))
	return prefix + v.ring.SealShort(purpose, payload) + "@" + domain
}

// Open reads the send an address names. ours says whether the address has the
// form of a Return-Path (bounces+...@); ok whether its token verifies.
func (v *VERP) Open(addr string) (accountID, sendID int64, ours, ok bool) {
	addr = strings.TrimSpace(strings.Trim(strings.TrimSpace(addr), "<>"))
	local, _, found := strings.Cut(addr, "@")
	if !found || len(local) <= len(prefix) || !strings.EqualFold(local[:len(prefix)], prefix) {
		return 0, 0, false, false
	}
	payload, err := v.ring.OpenShort(purpose, local[len(prefix):])
	if err != nil {
		return 0, 0, true, false
	}
	a, n := binary.Uvarint(payload)
	if n <= 0 {
		return 0, 0, true, false
	}
	s, m := binary.Uvarint(payload[n:])
	if m <= 0 || n+m != len(payload) || a == 0 || s == 0 || a > 1<<62 || s > 1<<62 {
		return 0, 0, true, false
	}
	return int64(a), int64(s), true, true
}
