// Package tracking is click and open tracking and the web archive: signed tokens
// that name one send (and, for a click, one of its campaign's stored links), the
// redirect and pixel that record hits in memory and write them in batches with
// their events, the classification that separates people from scanners, and the
// stats. docs/engagement.md has the rules and their sources.
package tracking

import (
	"encoding/binary"
	"errors"
	"strings"

	"github.com/sendonce/sendonce/internal/message"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// The purposes of the tokens, each its own HMAC domain (unsubscribe.Signer.Seal):
// a click token never opens as an open or web-view token, nor as an unsubscribe link.
const (
	purposeClick = "click"
	purposeOpen  = "open"
	purposeView  = "view"
)

// maxID bounds the ids a token may carry (database bigints, and what Uvarint reads).
const maxID = 1 << 62

// ErrInvalidToken is every token that does not verify or does not decode exactly.
var ErrInvalidToken = errors.New("tracking: invalid token")

// Send names one send: the account, its campaign and the send row.
type Send struct {
	AccountID, CampaignID, SendID int64
}

// Click is what a click token says: the send, the link's index (0: the hidden
// honeypot) and how many tracked links its message had.
type Click struct {
	Send
	Link, Links int
}

// Tokens signs and opens tracking tokens with the deployment's unsubscribe key
// ring (the first key signs, every key verifies), under their own domains.
type Tokens struct {
	signer *unsubscribe.Signer
	base   string // public URL without a trailing slash
}

// NewTokens returns Tokens that make links under publicURL.
func NewTokens(signer *unsubscribe.Signer, publicURL string) *Tokens {
	return &Tokens{signer: signer, base: strings.TrimRight(publicURL, "/")}
}

func appendSend(b []byte, s Send) []byte {
	b = binary.AppendUvarint(b, uint64(s.AccountID))
	b = binary.AppendUvarint(b, uint64(s.CampaignID))
	return binary.AppendUvarint(b, uint64(s.SendID))
}

// ClickToken returns the token of link idx of a send whose message has links tracked links.
func (t *Tokens) ClickToken(c Click) string {
	var buf [5 * binary.MaxVarintLen64]byte
	b := appendSend(buf[:0], c.Send)
	b = binary.AppendUvarint(b, uint64(c.Link))
	b = binary.AppendUvarint(b, uint64(c.Links))
	return t.signer.Seal(purposeClick, b)
}

// OpenToken returns the open pixel's token of a send.
func (t *Tokens) OpenToken(s Send) string {
	var buf [3 * binary.MaxVarintLen64]byte
	return t.signer.Seal(purposeOpen, appendSend(buf[:0], s))
}

// ViewToken returns the "view in browser" token of a send.
func (t *Tokens) ViewToken(s Send) string {
	var buf [3 * binary.MaxVarintLen64]byte
	return t.signer.Seal(purposeView, appendSend(buf[:0], s))
}

// uvarints reads exactly n canonical uvarints filling all of b.
func uvarints(b []byte, n int) ([]uint64, bool) {
	out := make([]uint64, n)
	for i := range out {
		v, k := binary.Uvarint(b)
		if k <= 0 || k != len(binary.AppendUvarint(nil, v)) {
			return nil, false // malformed, or a non-minimal spelling
		}
		out[i], b = v, b[k:]
	}
	return out, len(b) == 0
}

func sendOf(v []uint64) (Send, bool) {
	for _, id := range v[:3] {
		if id == 0 || id > maxID {
			return Send{}, false
		}
	}
	return Send{AccountID: int64(v[0]), CampaignID: int64(v[1]), SendID: int64(v[2])}, true
}

// OpenClick verifies a click token and decodes it strictly.
func (t *Tokens) OpenClick(token string) (Click, error) {
	p, err := t.signer.Open(purposeClick, token)
	if err != nil {
		return Click{}, ErrInvalidToken
	}
	v, ok := uvarints(p, 5)
	if !ok {
		return Click{}, ErrInvalidToken
	}
	s, ok := sendOf(v)
	if !ok || v[4] > message.MaxTrackedLinks || v[3] > v[4] {
		return Click{}, ErrInvalidToken
	}
	return Click{Send: s, Link: int(v[3]), Links: int(v[4])}, nil
}

// OpenSend verifies an open token.
func (t *Tokens) OpenSend(token string) (Send, error) { return t.openSend(purposeOpen, token) }

// OpenView verifies a "view in browser" token.
func (t *Tokens) OpenView(token string) (Send, error) { return t.openSend(purposeView, token) }

func (t *Tokens) openSend(purpose, token string) (Send, error) {
	p, err := t.signer.Open(purpose, token)
	if err != nil {
		return Send{}, ErrInvalidToken
	}
	v, ok := uvarints(p, 3)
	if !ok {
		return Send{}, ErrInvalidToken
	}
	s, ok := sendOf(v)
	if !ok {
		return Send{}, ErrInvalidToken
	}
	return s, nil
}

// Links returns the tracking links of one campaign recipient for the message
// builder: click URLs (when the campaign tracks clicks and has links tracked
// links), the open pixel (when it tracks opens) and the web view.
func (t *Tokens) Links(s Send, links int, clicks, opens bool) (click func(int) string, open, view string) {
	if clicks {
		click = func(idx int) string {
			return t.base + "/c/" + t.ClickToken(Click{Send: s, Link: idx, Links: links})
		}
	}
	if opens {
		open = t.base + "/o/" + t.OpenToken(s)
	}
	return click, open, t.base + "/v/" + t.ViewToken(s)
}
