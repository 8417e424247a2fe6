package transactional

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

func itoa(i int) string { return strconv.Itoa(i) }

// build makes the provider message of one message with the render package's one
// builder: its content is templates over the recipient and data, rendered under
// the same limits as a campaign's, with the keyed Message-ID of its job id; the
// extra headers follow the builder's.
func build(b *render.Builder, from, fromName, replyTo, subject, html, text string, r render.Recipient,
	links render.Links, headers []header) (provider.Message, error) {
	return buildTracked(b, from, fromName, replyTo, subject, html, text, r, &links, false, nil, headers)
}

// buildTracked is build with the HTML's literal links tracked when trackClicks,
// and track, when not nil, called with the number of those links (numbered as
// stored when the message was accepted: the same template, the same
// TrackableLinks) to set links' Click and Open.
func buildTracked(b *render.Builder, from, fromName, replyTo, subject, html, text string, r render.Recipient,
	links *render.Links, trackClicks bool, track func(n int), headers []header) (provider.Message, error) {
	p, err := b.Prepare(render.Campaign{FromEmail: from, FromName: fromName, ReplyTo: replyTo,
		Subject: subject, HTML: html, Text: text, TrackClicks: trackClicks})
	if err != nil {
		return provider.Message{}, repoint(err)
	}
	if track != nil {
		track(p.NumLinks())
	}
	m, err := p.Build(r, *links)
	if err != nil {
		return provider.Message{}, repoint(err)
	}
	for _, h := range headers {
		m.Headers = append(m.Headers, provider.Header{Name: h.Name, Value: h.Value})
	}
	return m, nil
}

// Builder builds claimed messages for the executor (its MessageBuilder).
type Builder struct {
	// Messages is the deployment's message builder (keyed Message-IDs).
	Messages *render.Builder
	// Links returns the unsubscribe links of a marketing message (only they carry
	// them): tokens naming the message and the address it goes to, never a
	// subscriber, so a link acts on that address even when the message's id equals
	// a subscriber's.
	Links func(accountID, streamID, messageID int64, email string) (httpsURL, mailto string)
	// Attachments reads the files of a message that has any (LoadAttachments).
	Attachments func(accountID, messageID int64) ([]provider.Attachment, error)
	// Tracking returns the click URL maker (when clicks) and the open pixel's URL
	// (when opens) of a tracked message, as the executor's Tracking does for a
	// campaign's recipient; nil sends every message untracked.
	Tracking func(accountID, streamID, sendID, messageID int64, links int, clicks, opens bool) (func(int) string, string)
	// WebView returns the message's "view in browser" URL ({{.WebViewURL}}); nil
	// leaves it empty.
	WebView func(accountID, streamID, sendID, messageID int64) string
}

// BuildMessage builds the provider message of a claimed message row.
func (b Builder) BuildMessage(r store.MessageClaimBatchRow) (provider.Message, error) {
	var headers []header
	if err := json.Unmarshal(r.Headers, &headers); err != nil {
		return provider.Message{}, err
	}
	var links render.Links
	if r.Category == Marketing && b.Links != nil {
		// A message's send row holds the message id in its subscriber slot.
		links.HTTPS, links.Mailto = b.Links(r.AccountID, r.CampaignID, r.SubscriberID, r.Email)
	}
	// Signed only when a template asks for it.
	if b.WebView != nil && (strings.Contains(r.Html, "WebViewURL") || strings.Contains(r.Text, "WebViewURL") ||
		strings.Contains(r.Subject, "WebViewURL")) {
		links.WebView = b.WebView(r.AccountID, r.CampaignID, r.ID, r.SubscriberID)
	}
	track := func(n int) {
		if b.Tracking != nil && (r.TrackClicks || r.TrackOpens) {
			links.Click, links.Open = b.Tracking(r.AccountID, r.CampaignID, r.ID, r.SubscriberID, n, r.TrackClicks, r.TrackOpens)
		}
	}
	m, err := buildTracked(b.Messages, r.FromEmail, r.FromName, r.ReplyTo, r.Subject, r.Html, r.Text,
		render.Recipient{JobID: r.JobID, Email: r.Email, Name: r.ToName, Attributes: r.Data}, &links, r.TrackClicks, track, headers)
	if err != nil {
		return m, err
	}
	// The job id is the Idempotency-Key's, which message retention frees: a key
	// reused after its message was deleted makes a new message with the same job
	// id. Its Message-ID must differ from the deleted one's (receivers may drop a
	// repeated Message-ID as a duplicate), so it is keyed on the message too; every
	// attempt of one message keeps one Message-ID. The provider's idempotency key
	// stays the job id: SENDONCE_MESSAGE_RETENTION is at least a day, longer than
	// the providers' own deduplication windows.
	m.MessageID = b.Messages.MessageID(r.JobID+"#"+strconv.FormatInt(r.SubscriberID, 10), r.FromEmail)
	m.MoreReplyTo, m.Cc, m.Bcc = r.ReplyToMore, r.Cc, r.Bcc
	if r.AttachmentCount > 0 {
		if b.Attachments == nil {
			return m, errors.New("this message has attachments and the executor has no attachment store")
		}
		if m.Attachments, err = b.Attachments(r.AccountID, r.SubscriberID); err != nil {
			// Not the message's fault: the executor retries it.
			return m, &provider.Error{Class: provider.Temporary, Err: fmt.Errorf("loading attachments: %w", err)}
		}
	}
	return m, nil
}

// LoadAttachments returns a function reading a message's files from pool, for
// Builder.Attachments.
func LoadAttachments(pool *pgxpool.Pool) func(accountID, messageID int64) ([]provider.Attachment, error) {
	return func(accountID, messageID int64) ([]provider.Attachment, error) {
		// BuildMessage has no context: the read is bounded on its own.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		rows, err := store.New(pool).MessageAttachmentList(ctx, store.MessageAttachmentListParams{AccountID: accountID, MessageID: messageID})
		if err != nil {
			return nil, err
		}
		out := make([]provider.Attachment, len(rows))
		for i, r := range rows {
			out[i] = provider.Attachment{Filename: r.Filename, ContentType: r.ContentType, ContentID: r.ContentID, Content: r.Content}
		}
		return out, nil
	}
}
