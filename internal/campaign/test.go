package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/message"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// MaxTestRecipients is how many addresses one test send may reach.
const MaxTestRecipients = 10

// Sender is what a test send needs of a provider.
type Sender interface {
	Send(ctx context.Context, m provider.Message) (providerMessageID string, err error)
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
// subscriber at that address, if any) and sends it through p with the subject
// prefixed "[TEST] ". Nothing is recorded in sends; the campaign may be in any state.
// A failure to one address is reported in its result, not as an error.
func (s *Service) Test(ctx context.Context, accountID, id int64, emails []string, p Sender) ([]TestResult, error) {
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
	c, err := q.CampaignGet(ctx, accountID, id)
	if err != nil {
		return nil, postgres.Error(err, "campaign")
	}
	tpl, err := message.Parse("[TEST] "+c.Subject, c.HtmlTemplate, c.TextTemplate)
	if err != nil {
		return nil, err
	}
	known, err := q.SubscriberFindByEmails(ctx, accountID, lower)
	if err != nil {
		return nil, err
	}
	type data struct {
		name  string
		attrs map[string]any
	}
	byEmail := make(map[string]data, len(known))
	for _, k := range known {
		attrs := map[string]any{}
		_ = json.Unmarshal(k.Attributes, &attrs)
		byEmail[k.EmailLower] = data{k.Name, attrs}
	}
	stamp := time.Now().UnixNano()
	out := make([]TestResult, len(addrs))
	for i, a := range addrs {
		d := byEmail[a.Lower]
		// A fresh job id per test: an idempotent provider must not swallow a repeated test.
		r := message.Recipient{JobID: fmt.Sprintf("test:%d:%d:%d", c.ID, stamp, i), Email: a.Email, Name: d.name}
		m, err := message.Builder{}.Compose(tpl, message.Campaign{FromEmail: c.FromEmail, FromName: c.FromName, ReplyTo: c.ReplyTo},
			r, d.attrs, message.Links{HTTPS: testUnsubscribeURL})
		if err != nil {
			return nil, err
		}
		out[i].Email = a.Email
		id, err := p.Send(ctx, m)
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
