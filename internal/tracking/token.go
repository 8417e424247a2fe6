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

	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/token"
)

// The purposes of the tokens, each its own HMAC domain (token.Ring.Seal):
// a click token never opens as an open or web-view token, nor as an unsubscribe link.
const (
	purposeClick = "click"
	purposeOpen  = "open"
	purposeView  = "view"
	// A single message's click and open tokens (POST /v1/messages with
	// track_clicks or track_opens) have domains of their own, so a message's token
	// never opens as a campaign's and the other way round; campaign tokens made
	// before messages were tracked keep verifying as they did.
	purposeMessageClick = "mclick"
	purposeMessageOpen  = "mopen"
	// A single message's "view in browser" token: it opens that message's page
	// only, never a campaign send's (whose ids it could share).
	purposeMessageView = "mview"
)

// maxID bounds the ids a token may carry (database bigints, and what Uvarint reads).
const maxID = 1 << 62

// ErrInvalidToken is every token that does not verify or does not decode exactly.
var ErrInvalidToken = errors.New("tracking: invalid token")

// Send names one send: the account, its campaign and the send row. A single
// message's send also names the message (MessageID, 0 for a campaign's): its
// CampaignID is the message's stream and SendID its send row.
type Send struct {
	AccountID, CampaignID, SendID int64
	MessageID                     int64
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
	signer *token.Ring
	base   string // public URL without a trailing slash
}

// NewTokens returns Tokens that make links under publicURL.
func NewTokens(signer *token.Ring, publicURL string) *Tokens {
	return &Tokens{signer: signer, base: strings.TrimRight(publicURL, "/")}
}

// appendSend encodes the account, campaign and send ids, and the message id when
// the send is a message's (its tokens are sealed under the message purposes).
func appendSend(b []byte, s Send) []byte {
	b = binary.AppendUvarint(b, uint64(s.AccountID))
	b = binary.AppendUvarint(b, uint64(s.CampaignID))
	b = binary.AppendUvarint(b, uint64(s.SendID))
	if s.MessageID != 0 {
		b = binary.AppendUvarint(b, uint64(s.MessageID))
	}
	return b
}

// ClickToken returns the token of link idx of a send whose message has links
// tracked links; a message's send (MessageID set) gets a message click token.
func (t *Tokens) ClickToken(c Click) string {
	var buf [6 * binary.MaxVarintLen64]byte
	b := appendSend(buf[:0], c.Send)
	b = binary.AppendUvarint(b, uint64(c.Link))
	b = binary.AppendUvarint(b, uint64(c.Links))
	if c.MessageID != 0 {
		return t.signer.Seal(purposeMessageClick, b)
	}
	return t.signer.Seal(purposeClick, b)
}

// OpenToken returns the open pixel's token of a send (of a message's send when
// MessageID is set).
func (t *Tokens) OpenToken(s Send) string {
	var buf [4 * binary.MaxVarintLen64]byte
	if s.MessageID != 0 {
		return t.signer.Seal(purposeMessageOpen, appendSend(buf[:0], s))
	}
	return t.signer.Seal(purposeOpen, appendSend(buf[:0], s))
}

// ViewToken returns the "view in browser" token of a campaign's send (messages
// have no web view: their MessageID is not encoded).
func (t *Tokens) ViewToken(s Send) string {
	var buf [3 * binary.MaxVarintLen64]byte
	s.MessageID = 0
	return t.signer.Seal(purposeView, appendSend(buf[:0], s))
}

// MessageViewToken returns the "view in browser" token of a single message's
// send (s.MessageID set): the account, the message's stream and send row, and
// the message.
func (t *Tokens) MessageViewToken(s Send) string {
	var buf [4 * binary.MaxVarintLen64]byte
	return t.signer.Seal(purposeMessageView, appendSend(buf[:0], s))
}

// MessageViewURL is the page a message's {{.WebViewURL}} links to.
func (t *Tokens) MessageViewURL(s Send) string { return t.base + "/v/" + t.MessageViewToken(s) }

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

// sendOf reads the ids of a send from v: three, or four for a message's send.
func sendOf(v []uint64, message bool) (Send, bool) {
	n := 3
	if message {
		n = 4
	}
	for _, id := range v[:n] {
		if id == 0 || id > maxID {
			return Send{}, false
		}
	}
	s := Send{AccountID: int64(v[0]), CampaignID: int64(v[1]), SendID: int64(v[2])}
	if message {
		s.MessageID = int64(v[3])
	}
	return s, true
}

// OpenClick verifies a click token (a campaign's or a message's) and decodes it strictly.
func (t *Tokens) OpenClick(token string) (Click, error) {
	ids, msg := 3, false
	p, err := t.signer.Open(purposeClick, token)
	if err != nil {
		if p, err = t.signer.Open(purposeMessageClick, token); err != nil {
			return Click{}, ErrInvalidToken
		}
		ids, msg = 4, true
	}
	v, ok := uvarints(p, ids+2)
	if !ok {
		return Click{}, ErrInvalidToken
	}
	s, ok := sendOf(v, msg)
	link, links := v[ids], v[ids+1]
	if !ok || links > render.MaxTrackedLinks || link > links {
		return Click{}, ErrInvalidToken
	}
	return Click{Send: s, Link: int(link), Links: int(links)}, nil
}

// OpenSend verifies an open token, a campaign's or a message's.
func (t *Tokens) OpenSend(token string) (Send, error) {
	s, err := t.openSend(purposeOpen, token, false)
	if err != nil {
		return t.openSend(purposeMessageOpen, token, true)
	}
	return s, nil
}

// OpenView verifies a campaign send's "view in browser" token.
func (t *Tokens) OpenView(token string) (Send, error) { return t.openSend(purposeView, token, false) }

// OpenMessageView verifies a single message's "view in browser" token.
func (t *Tokens) OpenMessageView(token string) (Send, error) {
	return t.openSend(purposeMessageView, token, true)
}

func (t *Tokens) openSend(purpose, token string, message bool) (Send, error) {
	p, err := t.signer.Open(purpose, token)
	if err != nil {
		return Send{}, ErrInvalidToken
	}
	n := 3
	if message {
		n = 4
	}
	v, ok := uvarints(p, n)
	if !ok {
		return Send{}, ErrInvalidToken
	}
	s, ok := sendOf(v, message)
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

// MessageLinks returns the click URLs (when clicks is set) and the open pixel
// (when opens is set) of a single message's send, for the transactional builder.
// s.MessageID must be set.
func (t *Tokens) MessageLinks(s Send, links int, clicks, opens bool) (click func(int) string, open string) {
	if clicks {
		click = func(idx int) string {
			return t.base + "/c/" + t.ClickToken(Click{Send: s, Link: idx, Links: links})
		}
	}
	if opens {
		open = t.base + "/o/" + t.OpenToken(s)
	}
	return click, open
}
