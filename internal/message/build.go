package message

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"strings"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/provider"
)

// Campaign is the part of a campaign a message is built from.
type Campaign struct {
	FromEmail string // bare address; its domain names the Message-ID's right-hand side
	FromName  string
	ReplyTo   string // bare address or ""
}

// Recipient is one send: the job id that makes it idempotent, and who receives it.
type Recipient struct {
	// JobID is the send's `campaign:<campaign>:<subscriber>` key.
	JobID string
	Email string
	Name  string
}

// Links are the recipient's unsubscribe addresses, made by the caller (the
// unsubscribe package signs the token).
type Links struct {
	// HTTPS is the one-click URL (https://…/u/TOKEN); it is also what
	// {{.UnsubscribeURL}} rendered as. Empty means no List-Unsubscribe-Post, since
	// RFC 8058 one-click needs an HTTP(S) URI.
	HTTPS string
	// Mailto is an address (unsubscribe@example.com) or a full mailto: URI; empty
	// means the header carries the HTTPS URI alone.
	Mailto string
}

// Header names set by Build.
const (
	HeaderListUnsubscribe     = "List-Unsubscribe"
	HeaderListUnsubscribePost = "List-Unsubscribe-Post"
	// OneClick is the only value RFC 8058 allows in List-Unsubscribe-Post.
	OneClick = "List-Unsubscribe=One-Click"
)

// Builder assembles messages. The zero Builder derives readable Message-IDs
// (MessageID); with MessageIDKey set they are keyed (KeyedMessageID), so a third
// party who knows the ids cannot predict a Message-ID and pre-empt delivery to
// receivers that deduplicate on it (REFERENCE §2.2).
type Builder struct {
	MessageIDKey []byte
}

// Build assembles a message with the zero Builder.
func Build(c Campaign, r Recipient, rendered Rendered, links Links) provider.Message {
	return Builder{}.Build(c, r, rendered, links)
}

// MessageID returns the Message-ID (without angle brackets) this Builder gives a job.
func (b Builder) MessageID(jobID, fromEmail string) string {
	if len(b.MessageIDKey) > 0 {
		return KeyedMessageID(b.MessageIDKey, jobID, fromEmail)
	}
	return MessageID(jobID, fromEmail)
}

// Build assembles the provider.Message for one recipient from the campaign, the
// rendered templates and the unsubscribe links. It does no I/O and cannot fail:
// the addresses were validated when they were stored.
//
// The Message-ID depends on the job id and the From domain only, so a resend of
// the same job (after a crash or an ambiguous failure) carries the same Message-ID
// and receivers that deduplicate on it show one message.
func (b Builder) Build(c Campaign, r Recipient, rendered Rendered, links Links) provider.Message {
	m := provider.Message{
		JobID:     r.JobID,
		MessageID: b.MessageID(r.JobID, c.FromEmail),
		From:      c.FromEmail,
		FromName:  c.FromName,
		ReplyTo:   c.ReplyTo,
		To:        r.Email,
		ToName:    r.Name,
		Subject:   rendered.Subject,
		HTML:      rendered.HTML,
		Text:      rendered.Text,
	}
	if v := ListUnsubscribe(links); v != "" {
		m.Headers = append(m.Headers, provider.Header{Name: HeaderListUnsubscribe, Value: v})
		if links.HTTPS != "" {
			m.Headers = append(m.Headers, provider.Header{Name: HeaderListUnsubscribePost, Value: OneClick})
		}
	}
	return m
}

// ListUnsubscribe returns the List-Unsubscribe value: the HTTPS URI first (RFC 8058
// requires one; clients prefer the leftmost), then the mailto URI; "" when both are empty.
func ListUnsubscribe(l Links) string {
	var parts []string
	if l.HTTPS != "" {
		parts = append(parts, "<"+l.HTTPS+">")
	}
	if l.Mailto != "" {
		parts = append(parts, "<"+mailtoURI(l.Mailto)+">")
	}
	return strings.Join(parts, ", ")
}

// mailtoURI turns a configured address into mailto:addr?subject=unsubscribe; a value
// that already is a mailto: URI is kept as given.
func mailtoURI(s string) string {
	if len(s) >= 7 && strings.EqualFold(s[:7], "mailto:") {
		return s
	}
	return "mailto:" + s + "?subject=unsubscribe"
}

// MessageID returns the Message-ID (without angle brackets) for a job:
// `campaign.12.345@example.com` for job `campaign:12:345` sent from
// news@example.com. The left side is an RFC 5322 dot-atom: the job id with ':'
// turned into '.'; a job id that does not map cleanly (characters outside atext,
// empty segments) is replaced by the hex SHA-256 of itself, which is still
// deterministic. The right side is the From domain, so the id is unique to the
// sender as §3.6.4 asks.
func MessageID(jobID, fromEmail string) string {
	left := strings.ReplaceAll(jobID, ":", ".")
	if !isDotAtom(left) {
		sum := sha256.Sum256([]byte(jobID))
		left = "job." + hex.EncodeToString(sum[:16])
	}
	return left + "@" + idDomain(fromEmail)
}

// KeyedMessageID returns `<26 base32 characters of HMAC-SHA256(key, jobID)>@<from
// domain>`: as deterministic as MessageID, but unpredictable without the key.
func KeyedMessageID(key []byte, jobID, fromEmail string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(jobID))
	left := strings.ToLower(b32.EncodeToString(mac.Sum(nil))[:26])
	return left + "@" + idDomain(fromEmail)
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// idDomain is the Message-ID's right side: the From domain, lowercased, when it is
// a dot-atom (a domain literal or garbage is replaced by a reserved name).
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
	if s == "" {
		return false
	}
	for _, seg := range strings.Split(s, ".") {
		if seg == "" {
			return false
		}
		for i := 0; i < len(seg); i++ {
			if !isAtext(seg[i]) {
				return false
			}
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

// Compose renders t for one recipient and builds the message, so the
// {{.UnsubscribeURL}} in the body is the same link as the List-Unsubscribe header.
// A message whose HTML and text both render empty is refused: it has no body.
func (b Builder) Compose(t *Templates, c Campaign, r Recipient, attributes map[string]any, links Links) (provider.Message, error) {
	rendered, err := t.Render(Data{Email: r.Email, Name: r.Name, Attributes: attributes, UnsubscribeURL: links.HTTPS})
	if err != nil {
		return provider.Message{}, err
	}
	if strings.TrimSpace(rendered.HTML) == "" && strings.TrimSpace(rendered.Text) == "" {
		return provider.Message{}, apperr.Invalidf("/html_template", "the message renders with no body")
	}
	return b.Build(c, r, rendered, links), nil
}
