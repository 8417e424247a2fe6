package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/provider"
)

func (s *Server) dashboardPage(w http.ResponseWriter, r *http.Request) error {
	if s.dash == nil {
		return apperr.New(apperr.NotFound, "the dashboard is turned off (SENDONCE_DASHBOARD=false)")
	}
	s.dash.Page(w, r)
	return nil
}

func (s *Server) dashboardAsset(w http.ResponseWriter, r *http.Request) error {
	if s.dash == nil || !s.dash.Asset(w, r, chi.URLParam(r, "version"), chi.URLParam(r, "name")) {
		return apperr.New(apperr.NotFound, "no such dashboard asset (reload the page)")
	}
	return nil
}

var errNoInbox = apperr.New(apperr.NotFound, "the dev inbox exists only under `sendonce dev` with the log provider")

func toAPIInboxMessage(m provider.Logged) api.DevInboxMessage {
	out := api.DevInboxMessage{Id: m.ID, JobId: m.JobID, MessageId: m.MessageID, From: m.Message.From, To: m.To,
		Subject: m.Subject, Text: m.Text, HasHtml: m.HTML != "", LoggedAt: m.LoggedAt}
	out.Headers = make([]api.DevInboxHeader, 0, len(m.Headers))
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, api.DevInboxHeader{Name: h.Name, Value: h.Value})
	}
	return out
}

// listDevInbox answers the account's messages of the dev inbox, newest first.
func (s *Server) listDevInbox(w http.ResponseWriter, r *http.Request) error {
	if s.DevInbox == nil {
		return errNoInbox
	}
	msgs, err := s.DevInbox.List(r.Context(), accountID(r))
	if err != nil {
		return err
	}
	out := make([]api.DevInboxMessage, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, toAPIInboxMessage(m))
	}
	return encode(w, http.StatusOK, api.DevInboxPage{Data: out})
}

// getDevInboxHTML answers a message's HTML for the dashboard's sandboxed iframe,
// under a policy that runs nothing of it.
func (s *Server) getDevInboxHTML(w http.ResponseWriter, r *http.Request) error {
	if s.DevInbox == nil {
		return errNoInbox
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	m, err := s.DevInbox.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	s.Dashboard.Message(w, m.HTML)
	return nil
}
