package devinbox

import (
	"context"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/provider"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// List returns the account's messages, newest first (Service.List).
func (a API) List(ctx context.Context, accountID int64) ([]api.DevInboxMessage, error) {
	msgs, err := a.Service.List(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]api.DevInboxMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, toAPIInboxMessage(m))
	}
	return out, nil
}

// HTML is the HTML part of the account's message id (Service.Get).
func (a API) HTML(ctx context.Context, accountID, id int64) (string, error) {
	m, err := a.Service.Get(ctx, accountID, id)
	if err != nil {
		return "", err
	}
	return m.HTML, nil
}

func toAPIInboxMessage(m provider.Logged) api.DevInboxMessage {
	out := api.DevInboxMessage{Id: m.ID, JobId: m.JobID, MessageId: m.MessageID, From: m.Message.From, To: m.To,
		Subject: m.Subject, Text: m.Text, HasHtml: m.HTML != "", LoggedAt: m.LoggedAt}
	out.Headers = make([]api.DevInboxHeader, 0, len(m.Headers))
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, api.DevInboxHeader{Name: h.Name, Value: h.Value})
	}
	return out
}
