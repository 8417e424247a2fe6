package campaign

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
)

// MaxTestRecipients is how many addresses one test send may reach.
const MaxTestRecipients = 10

// Sender is what a test send needs of a provider.
type Sender interface {
	Send(ctx context.Context, m provider.Message) (providerMessageID string, err error)
}

// Routes are the providers of the accounts' senders as a test send takes them.
type Routes struct{ *sender.Router }

// Sender is sender id's provider (sender.Router.Provider).
func (r Routes) Sender(ctx context.Context, accountID, id int64) (Sender, error) {
	p, _, err := r.Provider(ctx, accountID, id)
	return p, err
}

// TestResult is the outcome of a test send to one address.
type TestResult struct {
	Email             string
	Sent              bool
	ProviderMessageID string
	// Error says why the send failed: the failure class and provider status.
	Error string
	err   error
}

// Err is the full cause of a failed send, for the log.
func (r TestResult) Err() error { return r.err }

// testUnsubscribeURL stands in for the one-click link in test messages: a test send
// belongs to no recipient of the campaign, so no real token is signed for it.
const testUnsubscribeURL = "https://example.com/u/test-send"

// Test renders the campaign for each address (with the data of the account's
// subscriber at that address, if any) and sends it with the subject prefixed
// "[TEST] ", through the same builder as the campaign's real sends. A suppressed
// address is not sent to: its result says so, as the executor would skip it. via
// is the provider the test leaves through; the message is built by s.Messages.
// Nothing is recorded in sends; the campaign may be in any state. A failure to one
// address is reported in its result, not as an error.
func (s *Service) Test(ctx context.Context, accountID, id int64, emails []string, via Sender) ([]TestResult, error) {
	if len(emails) == 0 || len(emails) > MaxTestRecipients {
		return nil, apperr.Invalidf("/emails", "emails must hold 1 to %d addresses", MaxTestRecipients)
	}
	addrs := make([]address.Address, len(emails))
	lower := make([]string, len(emails))
	for i, e := range emails {
		a, err := address.Parse(e)
		if err != nil {
			return nil, apperr.Invalidf("/emails/"+strconv.Itoa(i), "%s", err.Error())
		}
		addrs[i], lower[i] = a, a.Lower
	}
	q := store.New(s.pool)
	c, err := q.CampaignGet(ctx, store.CampaignGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return nil, postgres.Error(err, "campaign")
	}
	subject, html, text := c.Subject, c.HtmlTemplate, c.TextTemplate
	if c.TemplateID != nil && c.Status == StatusDraft {
		// A draft made from a template has no content of its own until approval
		// copies the template's: test the template as it is now.
		t, err := q.TemplateGet(ctx, store.TemplateGetParams{AccountID: accountID, ID: *c.TemplateID})
		if err != nil {
			return nil, postgres.Error(err, "template")
		}
		subject, html, text = t.Subject, t.Html, t.Text
	}
	p, err := s.Messages.Prepare(render.Campaign{FromEmail: c.FromEmail, FromName: c.FromName, ReplyTo: c.ReplyTo,
		Subject: "[TEST] " + subject, HTML: html, Text: text})
	if err != nil {
		return nil, err
	}
	files, err := attachment.LoadCampaign(ctx, q, accountID, c.ID)
	if err != nil {
		return nil, err
	}
	known, err := q.SubscriberFindByEmails(ctx, store.SubscriberFindByEmailsParams{AccountID: accountID, Emails: lower})
	if err != nil {
		return nil, err
	}
	byEmail := make(map[string]store.SubscriberFindByEmailsRow, len(known))
	for _, k := range known {
		byEmail[k.EmailLower] = k
	}
	suppressed, err := q.SuppressionFindByEmails(ctx, store.SuppressionFindByEmailsParams{AccountID: accountID, Emails: lower})
	if err != nil {
		return nil, err
	}
	reasons := make(map[string]string, len(suppressed))
	for _, x := range suppressed {
		reasons[x.EmailLower] = x.Reason
	}
	stamp := time.Now().UnixNano()
	msgs := make([]provider.Message, len(addrs))
	for i, a := range addrs {
		k := byEmail[a.Lower]
		// A fresh job id per test: an idempotent provider must not swallow a repeated test.
		r := render.Recipient{JobID: fmt.Sprintf("test:%d:%d:%d", c.ID, stamp, i), Email: a.Email, Name: k.Name, Attributes: k.Attributes}
		// Every message is built before any is sent: a template that fails for one
		// address fails the request (422) with nothing sent.
		if msgs[i], err = p.Build(r, render.Links{HTTPS: testUnsubscribeURL}); err != nil {
			return nil, err
		}
		msgs[i].Attachments = files
	}
	out := make([]TestResult, len(addrs))
	for i, a := range addrs {
		out[i].Email = a.Email
		if reason, ok := reasons[a.Lower]; ok {
			out[i].Error = "suppressed (" + reason + "): not sent"
			continue
		}
		id, err := via.Send(ctx, msgs[i])
		if err != nil {
			// The class and the provider's status, not the cause: the cause may name
			// internal hosts. The caller logs err in full.
			out[i].Error = provider.ClassOf(err).String() + " failure"
			var pe *provider.Error
			if errors.As(err, &pe) && pe.Code != 0 {
				out[i].Error += fmt.Sprintf(" (provider status %d)", pe.Code)
			}
			out[i].err = err
			continue
		}
		out[i].Sent, out[i].ProviderMessageID = true, id
	}
	return out, nil
}
