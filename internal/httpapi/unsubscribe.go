package httpapi

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// unsubscribeBodyLimit bounds the one-click body: it holds one short key/value pair.
const unsubscribeBodyLimit = 16 << 10

// unsubscribePage answers GET /u/{token}: the preference page, whose forms POST.
// It changes nothing, because mail software fetches header URLs on its own.
func (s *Server) unsubscribePage(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Unsubscribe.Preferences(r.Context(), chi.URLParam(r, "token"))
	if err != nil {
		return unsubscribeError(w, err)
	}
	writeHTML(w, unsubscribe.PreferencePage(p, false))
	return nil
}

// unsubscribePost answers POST /u/{token}. A mail client's one-click POST (RFC
// 8058: List-Unsubscribe=One-Click), or an empty body, is the one-click opt-out: the
// address leaves the campaign's lists (or is suppressed, per the account's
// unsubscribe_scope) before the answer, 200 with an empty body. The preference
// page's forms send action=preferences (the checked lists) or action=everything
// (suppress the address); a browser asking for HTML gets a page back, also 200.
// Never a redirect.
func (s *Server) unsubscribePost(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, unsubscribeBodyLimit)
	variant := "empty"
	// ParseMultipartForm reads urlencoded bodies as well; an empty body has no
	// Content-Type.
	if r.ContentLength != 0 && r.Header.Get("Content-Type") != "" {
		if err := parseFormBody(r, unsubscribeBodyLimit); err != nil {
			return badUnsubscribeForm(w)
		}
		switch {
		case r.PostFormValue("List-Unsubscribe") == "One-Click":
			variant = "one-click"
		case r.PostFormValue("action") == "preferences":
			variant = "preferences"
		case r.PostFormValue("action") == "everything":
			variant = "everything"
		case r.PostFormValue("action") == "erase-ask", r.PostFormValue("action") == "erase",
			r.PostFormValue("action") == "export":
			variant = r.PostFormValue("action")
		default:
			variant = "form"
		}
	}
	token := chi.URLParam(r, "token")
	var rec unsubscribe.Recipient
	var err error
	switch variant {
	case "preferences":
		var lists []int64
		for _, v := range r.PostForm["list"] {
			id, perr := strconv.ParseInt(v, 10, 64)
			if perr != nil || id < 1 {
				return badUnsubscribeForm(w)
			}
			lists = append(lists, id)
		}
		p, err := s.Unsubscribe.SetPreferences(r.Context(), token, lists)
		if err != nil {
			return unsubscribeError(w, err)
		}
		s.Logger.InfoContext(r.Context(), "unsubscribe preferences", "account", p.AccountID,
			"campaign", p.CampaignID, "subscriber", p.SubscriberID, "subscribed_lists", len(lists))
		writeHTML(w, unsubscribe.PreferencePage(p, true))
		return nil
	case "erase-ask", "erase", "export":
		return s.personalData(w, r, token, variant)
	case "everything":
		rec, err = s.Unsubscribe.UnsubscribeAll(r.Context(), token)
	default:
		rec, err = s.Unsubscribe.Unsubscribe(r.Context(), token)
	}
	if err != nil {
		return unsubscribeError(w, err)
	}
	s.Logger.InfoContext(r.Context(), "unsubscribe", "account", rec.AccountID,
		"campaign", rec.CampaignID, "subscriber", rec.SubscriberID, "message", rec.MessageID, "variant", variant,
		"scope", rec.Scope)
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		writeHTML(w, unsubscribe.DonePage(rec.Language, rec.Scope))
		return nil
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	return nil
}

// parseFormBody parses a urlencoded or multipart body (already size-limited by the
// caller's MaxBytesReader) into r.PostForm. ParseMultipartForm alone would not do:
// on a urlencoded body it reports only that the body is not multipart and drops
// the read error, so an oversize body would pass as an empty form.
func parseFormBody(r *http.Request, maxMemory int64) error {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		return r.ParseMultipartForm(maxMemory)
	}
	return r.ParseForm()
}

func badUnsubscribeForm(w http.ResponseWriter) error {
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadRequest)
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

func writeHTML(w http.ResponseWriter, body []byte) { writeHTMLStatus(w, http.StatusOK, body) }

// writeHTMLStatus writes one of the service's own pages (no script, no framing,
// forms posting to this origin only) with status.
func writeHTMLStatus(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
