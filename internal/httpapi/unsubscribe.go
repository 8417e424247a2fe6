package httpapi

import (
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// unsubscribeBodyLimit bounds the one-click body: it holds one short key/value pair.
const unsubscribeBodyLimit = 16 << 10

// unsubscribePage answers GET /u/{token}: a confirmation page whose button POSTs.
// It changes nothing, because mail software fetches header URLs on its own.
func (s *Server) unsubscribePage(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.Unsubscribe.Lookup(r.Context(), chi.URLParam(r, "token"))
	if err != nil {
		return unsubscribeError(w, err)
	}
	writeHTML(w, unsubscribe.Page(rec.Language, false))
	return nil
}

// unsubscribePost answers POST /u/{token} (RFC 8058): the address is suppressed
// before the answer. A mail client's one-click POST gets 200 with an empty body;
// our own page (a browser asking for HTML) gets the "you are unsubscribed" page,
// also with 200. Never a redirect.
func (s *Server) unsubscribePost(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, unsubscribeBodyLimit)
	variant := "empty"
	// ParseMultipartForm reads urlencoded bodies as well; an empty body has no
	// Content-Type and is our own page's button.
	if r.ContentLength != 0 && r.Header.Get("Content-Type") != "" {
		if err := r.ParseMultipartForm(unsubscribeBodyLimit); err != nil && !errors.Is(err, http.ErrNotMultipart) {
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusBadRequest)
			return nil
		}
		if r.PostFormValue("List-Unsubscribe") == "One-Click" {
			variant = "one-click"
		} else {
			variant = "form"
		}
	}
	rec, err := s.Unsubscribe.Unsubscribe(r.Context(), chi.URLParam(r, "token"))
	if err != nil {
		return unsubscribeError(w, err)
	}
	s.Logger.InfoContext(r.Context(), "one-click unsubscribe", "account", rec.AccountID,
		"campaign", rec.CampaignID, "subscriber", rec.SubscriberID, "variant", variant)
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		writeHTML(w, unsubscribe.Page(rec.Language, true))
		return nil
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return nil
}

// unsubscribeError answers a bad token with a bare 404 (no body to build an oracle
// from); other errors go the usual way.
func unsubscribeError(w http.ResponseWriter, err error) error {
	if apperr.Is(err, apperr.NotFound) {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		return nil
	}
	return err
}

func writeHTML(w http.ResponseWriter, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
