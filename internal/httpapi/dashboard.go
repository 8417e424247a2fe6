package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
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

// listDevInbox answers the account's messages of the dev inbox, newest first.
func (s *Server) listDevInbox(w http.ResponseWriter, r *http.Request) error {
	if s.DevInbox == nil {
		return errNoInbox
	}
	out, err := s.DevInbox.List(r.Context(), accountID(r))
	if err != nil {
		return err
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
	html, err := s.DevInbox.HTML(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	s.Dashboard.Message(w, html)
	return nil
}
