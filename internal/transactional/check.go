package transactional

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/template"
)

// Limits on what a message may carry besides its content.
const (
	MaxHeaders = 20
	MaxTags    = 10
	maxName    = 200
	// MaxRecipients bounds to, cc and bcc together (Postmark's limit; Resend's
	// is 50 per field).
	MaxRecipients = 50
	// MaxReplyTo bounds the Reply-To list.
	MaxReplyTo = 10
)

// headerName is a custom header a message may set: X- headers (not X-Sendonce-),
// and the threading headers. Everything the service or the provider sets (From,
// To, Subject, Message-ID, List-Unsubscribe, MIME headers, …) is refused, as is any
// other standard header, so a message cannot change its own envelope or identity.
var headerName = regexp.MustCompile(`^(?i:x-[a-z0-9][a-z0-9-]{0,62}|in-reply-to|references)$`)

// tagRe is one tag: short, and safe in a query string.
var tagRe = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// checked is a request made ready to store: addresses normalised, the content
// (a template's, copied now) and the extra headers in a fixed order.
type checked struct {
	to, from, replyTo, category string
	subject, html, text         string
	data                        json.RawMessage
	headers                     []header
	tags                        []string
	moreReplyTo, cc, bcc        []string
	attachments                 []provider.Attachment
	// trackClicks and trackOpens are the request's, or (track_clicks) its
	// template's default; links are the HTML's tracked URLs when clicks are.
	trackClicks, trackOpens bool
	links                   []string
}

// header is one extra header as stored.
type header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// check validates a request and builds its message once, as the executor will, so
// content that cannot render for this recipient and data is a 422 now.
func (s *Service) check(ctx context.Context, accountID int64, key string, in Request) (checked, error) {
	var c checked
	if err := checkKey(key); err != nil {
		return c, err
	}
	to, err := address.Parse(in.To)
	if err != nil {
		return c, apperr.Invalidf("/to", "%s", err.Error())
	}
	c.to = to.Email
	from, err := address.Parse(in.From)
	if err != nil {
		return c, apperr.Invalidf("/from", "%s", err.Error())
	}
	c.from = from.Email
	if err := s.checkSender(ctx, accountID, in.SenderID, in.PoolID, c.from); err != nil {
		return c, err
	}
	if in.ReplyTo != "" {
		r, err := address.Parse(in.ReplyTo)
		if err != nil {
			return c, apperr.Invalidf("/reply_to", "%s", err.Error())
		}
		c.replyTo = r.Email
	}
	if len(in.MoreReplyTo)+1 > MaxReplyTo {
		return c, apperr.Invalidf("/reply_to", "at most %d reply_to addresses", MaxReplyTo)
	}
	if c.moreReplyTo, err = checkAddresses(in.MoreReplyTo, "/reply_to", 1); err != nil {
		return c, err
	}
	if 1+len(in.Cc)+len(in.Bcc) > MaxRecipients {
		return c, apperr.Invalidf("/cc", "to, cc and bcc may hold at most %d addresses together", MaxRecipients)
	}
	if c.cc, err = checkAddresses(in.Cc, "/cc", 0); err != nil {
		return c, err
	}
	if c.bcc, err = checkAddresses(in.Bcc, "/bcc", 0); err != nil {
		return c, err
	}
	files := make([]attachment.Input, len(in.Attachments))
	for i, a := range in.Attachments {
		files[i] = attachment.Input(a)
	}
	if c.attachments, err = attachment.Check(files, "/attachments"); err != nil {
		return c, err
	}
	for ptr, v := range map[string]string{"/to_name": in.ToName, "/from_name": in.FromName} {
		if len(v) > maxName || strings.ContainsAny(v, "\r\n\x00") {
			return c, apperr.Invalidf(ptr, "%s must be one line of at most %d bytes", ptr[1:], maxName)
		}
	}
	switch in.Category {
	case "", Transactional:
		c.category = Transactional
	case Marketing:
		c.category = Marketing
	default:
		return c, apperr.Invalidf("/category", "category must be transactional or marketing")
	}
	if c.headers, err = checkHeaders(in.Headers); err != nil {
		return c, err
	}
	if c.tags, err = checkTags(in.Tags); err != nil {
		return c, err
	}
	c.data = in.Data
	if c.data == nil {
		c.data = json.RawMessage(`{}`)
	}
	if len(c.data) > render.MaxAttributeBytes {
		return c, apperr.Invalidf("/data", "data must be at most %d bytes of JSON", render.MaxAttributeBytes)
	}
	if d := bytes.TrimSpace(c.data); len(d) == 0 || d[0] != '{' || !json.Valid(d) {
		return c, apperr.Invalidf("/data", "data must be a JSON object")
	}
	inline := in.Subject != nil || in.HTML != nil || in.Text != nil || in.Markdown != nil || in.Blocks != nil
	switch {
	case in.TemplateID != nil && inline:
		return c, apperr.Invalidf("/template_id", "a message takes its content from template_id or from subject, html and text, not both")
	case in.Markdown != nil && (in.HTML != nil || in.Text != nil):
		return c, apperr.Invalidf("/markdown", "a message takes its body from markdown or from html and text, not both")
	case in.Blocks != nil && (in.HTML != nil || in.Text != nil || in.Markdown != nil):
		return c, apperr.Invalidf("/blocks", "a message takes its body from blocks, from markdown or from html and text, only one of them")
	case in.LayoutID != nil && in.Markdown == nil && in.Blocks == nil:
		return c, apperr.Invalidf("/layout_id", "layout_id frames markdown or blocks: it needs one of them as the body")
	case in.TemplateID != nil:
		t, err := store.New(s.pool).TemplateGet(ctx, store.TemplateGetParams{AccountID: accountID, ID: *in.TemplateID})
		if err = postgres.Error(err, "template"); apperr.Is(err, apperr.NotFound) {
			return c, apperr.Invalidf("/template_id", "template %d not found", *in.TemplateID)
		} else if err != nil {
			return c, err
		}
		c.subject, c.html, c.text = t.Subject, t.Html, t.Text
		c.trackClicks = t.TrackClicks
	case in.Subject == nil || strings.TrimSpace(*in.Subject) == "":
		return c, apperr.Invalidf("/subject", "subject is required unless the message names a template_id")
	case in.Markdown != nil:
		if strings.TrimSpace(*in.Markdown) == "" {
			return c, apperr.Invalidf("/markdown", "markdown must not be empty")
		}
		// Composed as a Markdown template is (the same conversion and frame).
		c.subject = *in.Subject
		if c.html, c.text, err = layout.Compose(ctx, store.New(s.pool), accountID, in.LayoutID, *in.Markdown); err != nil {
			return c, err
		}
	case in.Blocks != nil:
		// Composed as a block template is (the same renderer, frame and brand colours).
		c.subject = *in.Subject
		if c.html, c.text, err = layout.ComposeContent(ctx, store.New(s.pool), accountID, in.LayoutID, "blocks", "", in.Blocks); err != nil {
			return c, err
		}
	default:
		c.subject, c.html, c.text = *in.Subject, optional.Value(in.HTML), optional.Value(in.Text)
		if strings.TrimSpace(c.html) == "" && strings.TrimSpace(c.text) == "" {
			return c, apperr.Invalidf("/html", "a message needs an html or a text part")
		}
	}
	if in.TrackClicks != nil {
		c.trackClicks = *in.TrackClicks
	}
	if in.TrackOpens != nil {
		c.trackOpens = *in.TrackOpens
	}
	if c.trackClicks {
		c.links = render.TrackableLinks(c.html)
	}
	_, err = build(s.b, c.from, in.FromName, c.replyTo, c.subject, c.html, c.text,
		render.Recipient{JobID: JobID(accountID, key), Email: c.to, Name: in.ToName, Attributes: c.data},
		render.Links{}, nil)
	if err != nil && in.Markdown != nil {
		// The html and text were composed from the markdown: name what was sent.
		err = template.MarkdownError(err)
	} else if err != nil && in.Blocks != nil {
		err = template.SourceError("blocks", err)
	}
	return c, err
}

// checkAddresses parses each address of a list (the first of which sits at
// index offset of the API's field) into its normalised form.
func checkAddresses(in []string, pointer string, offset int) ([]string, error) {
	var out []string
	for i, a := range in {
		p, err := address.Parse(a)
		if err != nil {
			return nil, apperr.Invalidf(pointer+"/"+itoa(i+offset), "%s", err.Error())
		}
		out = append(out, p.Email)
	}
	return out, nil
}

// checkKey refuses an empty or overlong Idempotency-Key.
func checkKey(key string) error {
	if key == "" || len(key) > 255 {
		return apperr.Invalidf("/Idempotency-Key", "Idempotency-Key is required: 1 to 255 printable ASCII characters")
	}
	return nil
}

// checkSender refuses a sender_id that is not one of the account's senders, a
// pool_id named with it or not one of the account's pools (sender.CheckPool, the
// campaigns' rule), and a From the sender (the named one, else the account's
// default) or any sender of the pool does not allow, by the rule campaigns are
// held to at approval (an address or a domain in allowed_from; an empty list
// allows any).
func (s *Service) checkSender(ctx context.Context, accountID int64, senderID, poolID *int64, from string) error {
	q := store.New(s.pool)
	if poolID != nil && *poolID < 1 {
		return apperr.Invalidf("/pool_id", "sender pool %d not found", *poolID)
	}
	if err := sender.CheckPool(ctx, q, accountID, senderID, poolID, "/pool_id"); err != nil {
		return err
	}
	if poolID != nil {
		return sender.CheckPoolFrom(ctx, q, accountID, *poolID, from, "/from")
	}
	found, err := sender.CheckFrom(ctx, q, accountID, senderID, from, "/from")
	if !found && err == nil && senderID != nil {
		return apperr.Invalidf("/sender_id", "sender %d not found", *senderID)
	}
	return err
}

func checkHeaders(in map[string]string) ([]header, error) {
	if len(in) > MaxHeaders {
		return nil, apperr.Invalidf("/headers", "at most %d headers", MaxHeaders)
	}
	out := make([]header, 0, len(in))
	seen := map[string]bool{}
	for name, value := range in {
		ptr := "/headers/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(name)
		lower := strings.ToLower(name)
		if !headerName.MatchString(name) || strings.HasPrefix(lower, "x-sendonce") {
			return nil, apperr.Invalidf(ptr, "header %q is not allowed: only X- headers (not X-Sendonce-), In-Reply-To and References", name)
		}
		if seen[lower] {
			return nil, apperr.Invalidf(ptr, "header %q is given twice", name)
		}
		seen[lower] = true
		if len(value) > 998 || value == "" {
			return nil, apperr.Invalidf(ptr, "a header value must be 1 to 998 bytes")
		}
		for i := 0; i < len(value); i++ {
			if c := value[i]; c < 0x20 && c != '\t' || c == 0x7f {
				return nil, apperr.Invalidf(ptr, "a header value must be one line without control characters")
			}
		}
		out = append(out, header{Name: name, Value: value})
	}
	slices.SortFunc(out, func(a, b header) int { return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)) })
	return out, nil
}

func checkTags(in []string) ([]string, error) {
	if len(in) > MaxTags {
		return nil, apperr.Invalidf("/tags", "at most %d tags", MaxTags)
	}
	out := []string{}
	for i, t := range in {
		if !tagRe.MatchString(t) {
			return nil, apperr.Invalidf("/tags/"+itoa(i), "a tag is 1 to 64 of A-Z a-z 0-9 _ . : -")
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// repoint names the message's fields (subject, html, text) in a builder error.
func repoint(err error) error { return template.Repoint(err, "") }
