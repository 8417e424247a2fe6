package render

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"hash"
	"strings"
	"sync"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/provider"
)

// Campaign is what a message is built from: the sender and the three templates.
type Campaign struct {
	// TrackClicks rewrites the links the HTML template writes literally (Links).
	TrackClicks bool
	FromEmail   string // bare address; its domain names the Message-ID's right-hand side
	FromName    string
	ReplyTo     string // bare address or ""
	Subject     string // templates
	HTML        string
	Text        string
}

// Recipient is one send: the job id that makes it idempotent, and who receives it.
type Recipient struct {
	// JobID is the send's idempotency key (`campaign:<campaign>:<subscriber>` for
	// campaigns); the Message-ID is derived from it.
	JobID string
	Email string
	Name  string
	// Attributes is the subscriber's attributes as stored (a JSON object, or empty).
	// It is decoded only when a template refers to attributes.
	Attributes []byte
	// Event is a sequence step's event data (a JSON object, or empty): {{.Event}}.
	Event []byte
}

// Links are the recipient's unsubscribe addresses, made by the caller (the
// unsubscribe package signs the token).
type Links struct {
	// HTTPS is the one-click URL (https://…/u/TOKEN); it is also what
	// {{.UnsubscribeURL}} renders as. Empty means no List-Unsubscribe-Post, since
	// RFC 8058 one-click needs an HTTP(S) URI.
	HTTPS string
	// Mailto is an address (unsubscribe@example.com) or a full mailto: URI; empty
	// means the header carries the HTTPS URI alone.
	Mailto string
	// Click returns the tracked URL of the campaign's link idx (1…n in the order of
	// Prepared.Links; 0 is the hidden honeypot link). Nil: links are not rewritten.
	Click func(idx int) string
	// Open is the URL of the 1×1 open-tracking image; empty: none.
	Open string
	// WebView is the message's "view in browser" page ({{.WebViewURL}}).
	WebView string
}

// Header names set by Build.
const (
	HeaderListUnsubscribe     = "List-Unsubscribe"
	HeaderListUnsubscribePost = "List-Unsubscribe-Post"
	// OneClick is the only value RFC 8058 allows in List-Unsubscribe-Post.
	OneClick = "List-Unsubscribe=One-Click"
)

// MinMessageIDKey is the shortest Message-ID key NewBuilder accepts.
const MinMessageIDKey = 16

// Builder holds what every message of a deployment shares: the Message-ID key.
// Message-IDs are HMAC-SHA256(key, job id), so they are deterministic per job (a
// replay after a crash carries the same Message-ID, and receivers that deduplicate
// on it show one message) but reveal no ids and cannot be predicted by a third
// party, who could otherwise send first with the same Message-ID and have the real
// message dropped by receivers that deduplicate. A Builder is safe for concurrent use.
type Builder struct {
	macs sync.Pool // hash.Hash keyed with the Message-ID key, reset before use
}

// NewBuilder returns a Builder keyed with key (at least MinMessageIDKey bytes).
func NewBuilder(key []byte) (*Builder, error) {
	if len(key) < MinMessageIDKey {
		return nil, errors.New("message: the Message-ID key must be at least 16 bytes")
	}
	k := append([]byte(nil), key...)
	b := &Builder{}
	// hmac.New writes the keyed inner state once; Reset restores it, so a pooled
	// hash costs no key schedule per message.
	b.macs.New = func() any { return hmac.New(sha256.New, k) }
	return b, nil
}

// NewRandomBuilder returns a Builder with a random key, for tests and tools whose
// Message-IDs need not survive the process.
func NewRandomBuilder() *Builder {
	b, err := NewBuilder([]byte(rand.Text()))
	if err != nil {
		panic(err) // rand.Text is 26 characters
	}
	return b
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// MessageID returns the Message-ID (without angle brackets) of a job sent from
// fromEmail: 26 lowercase base32 characters of HMAC-SHA256(key, jobID) (130 bits),
// "@", and the From domain.
func (b *Builder) MessageID(jobID, fromEmail string) string {
	return b.messageID(jobID, "@"+idDomain(fromEmail))
}

func (b *Builder) messageID(jobID, atDomain string) string {
	h := b.macs.Get().(hash.Hash)
	h.Reset()
	h.Write([]byte(jobID))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	b.macs.Put(h)
	var enc [52]byte // base32 of 32 bytes
	b32.Encode(enc[:], sum[:])
	left := enc[:26]
	for i, c := range left {
		if 'A' <= c && c <= 'Z' {
			left[i] = c + 'a' - 'A'
		}
	}
	var sb strings.Builder
	sb.Grow(len(left) + len(atDomain))
	sb.Write(left)
	sb.WriteString(atDomain)
	return sb.String()
}

// Prepared is a campaign made ready to build messages: templates parsed and
// checked against the limits (bound.go), parts that do not depend on the recipient
// rendered once, the Message-ID domain computed once. Safe for concurrent use.
type Prepared struct {
	b        *Builder
	c        Campaign
	atDomain string // "@" + the Message-ID's right side
	tpl      *Templates
	// links numbers the tracked URLs from 1 (TrackClicks; nil: none tracked).
	links map[string]int
}

// Prepare parses and checks c's templates. The error is an invalid-input error
// naming the template (/subject, /html_template, /text_template).
func (b *Builder) Prepare(c Campaign) (*Prepared, error) {
	t, err := Parse(c.Subject, c.HTML, c.Text)
	if err != nil {
		return nil, err
	}
	p := &Prepared{b: b, c: c, atDomain: "@" + idDomain(c.FromEmail), tpl: t}
	if c.TrackClicks {
		p.links = linkIndex(TrackableLinks(c.HTML))
	}
	return p, nil
}

// Build renders the campaign for one recipient and assembles the provider message,
// so the {{.UnsubscribeURL}} in the body is the link of the List-Unsubscribe header.
// It does no I/O. It fails, with an invalid-input error naming the template, when
// a template does not execute for this recipient, exceeds a limit, or when both
// bodies render blank: a permanent failure for this recipient.
func (p *Prepared) Build(r Recipient, links Links) (provider.Message, error) {
	return p.build(nil, r, links)
}

// Buffers are one sender's output buffers, reused by BuildInto from one message
// to the next.
type Buffers struct {
	out     bytes.Buffer // the rendered parts
	tracked bytes.Buffer // the HTML with its links tracked
}

// maxKeptBuffer is the largest buffer Trim keeps for the next message.
const maxKeptBuffer = 1 << 20

// Trim lets go of a buffer grown over 1 MiB by a large message, so that a
// sender keeps at most that much between messages.
func (b *Buffers) Trim() {
	for _, buf := range []*bytes.Buffer{&b.out, &b.tracked} {
		if buf.Cap() > maxKeptBuffer {
			*buf = bytes.Buffer{}
		}
	}
}

// BuildInto is Build writing the message's HTML and text into bufs rather than
// into a fresh string of each message: the returned Message's HTML and Text are
// bufs' bytes, valid only until bufs is used again (the next BuildInto), so the
// message must be sent (provider.Provider's Send reads them only until it
// returns) before the next is built, and anything that keeps it longer keeps
// m.Clone(). One goroutine's bufs, one message at a time.
func (p *Prepared) BuildInto(bufs *Buffers, r Recipient, links Links) (provider.Message, error) {
	return p.build(bufs, r, links)
}

func (p *Prepared) build(bufs *Buffers, r Recipient, links Links) (provider.Message, error) {
	var out *bytes.Buffer
	if bufs != nil {
		out = &bufs.out
	}
	rendered, err := p.tpl.renderTo(out, r, Data{UnsubscribeURL: links.HTTPS, WebViewURL: links.WebView})
	if err != nil {
		return provider.Message{}, err
	}
	switch {
	case !p.tracks(rendered.HTML, links):
	case bufs == nil:
		rendered.HTML = p.track(rendered.HTML, links)
	default:
		bufs.tracked.Reset()
		p.trackInto(&bufs.tracked, rendered.HTML, links)
		rendered.HTML = aliasOf(&bufs.tracked)
	}
	if isBlank(rendered.HTML) && isBlank(rendered.Text) {
		return provider.Message{}, apperr.Invalidf("/html_template", "the message renders with no body")
	}
	m := provider.Message{
		JobID:     r.JobID,
		MessageID: p.b.messageID(r.JobID, p.atDomain),
		From:      p.c.FromEmail,
		FromName:  p.c.FromName,
		ReplyTo:   p.c.ReplyTo,
		To:        r.Email,
		ToName:    r.Name,
		Subject:   rendered.Subject,
		HTML:      rendered.HTML,
		Text:      rendered.Text,
	}
	if v := ListUnsubscribe(links); v != "" {
		m.Headers = make([]provider.Header, 1, 2)
		m.Headers[0] = provider.Header{Name: HeaderListUnsubscribe, Value: v}
		if links.HTTPS != "" {
			m.Headers = append(m.Headers, provider.Header{Name: HeaderListUnsubscribePost, Value: OneClick})
		}
	}
	return m, nil
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// ListUnsubscribe returns the List-Unsubscribe value: the HTTPS URI first (RFC 8058
// requires one; clients prefer the leftmost), then the mailto URI; "" when both are empty.
func ListUnsubscribe(l Links) string {
	switch {
	case l.HTTPS != "" && l.Mailto != "":
		return "<" + l.HTTPS + ">, <" + mailtoURI(l.Mailto) + ">"
	case l.HTTPS != "":
		return "<" + l.HTTPS + ">"
	case l.Mailto != "":
		return "<" + mailtoURI(l.Mailto) + ">"
	}
	return ""
}

// mailtoURI turns a configured address into mailto:addr?subject=unsubscribe; a value
// that already is a mailto: URI is kept as given.
func mailtoURI(s string) string {
	if len(s) >= 7 && strings.EqualFold(s[:7], "mailto:") {
		return s
	}
	return "mailto:" + s + "?subject=unsubscribe"
}

// idDomain is the Message-ID's right side: the From domain, lowercased, when it is
// a dot-atom (a domain literal or garbage is replaced by a reserved name). RFC 5322
// §3.6.4 recommends a domain there, which makes the id unique to the sender.
func idDomain(fromEmail string) string {
	domain := ""
	if at := strings.LastIndexByte(fromEmail, '@'); at >= 0 {
		domain = strings.ToLower(fromEmail[at+1:])
	}
	if !isDotAtom(domain) {
		domain = "sendonce.invalid"
	}
	return domain
}

// isDotAtom reports whether s is an RFC 5322 dot-atom-text: atext runs separated
// by single dots, no leading or trailing dot.
func isDotAtom(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if s[i-1] == '.' {
				return false
			}
			continue
		}
		if !isAtext(c) {
			return false
		}
	}
	return true
}

func isAtext(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}
