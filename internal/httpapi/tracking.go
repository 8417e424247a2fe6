package httpapi

import (
	"context"
	"html"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// Tracker records clicks and opens and serves the stats, the web view and the
// archive (tracking.API). A page is its HTML and its text part.
type Tracker interface {
	Click(ctx context.Context, token, method, ua string) (string, error)
	Open(token, method, ua string) error
	WebView(ctx context.Context, token string,
		unsubscribeURL func(accountID, campaignID, subscriberID int64) string) (html, text string, err error)
	MessageWebView(ctx context.Context, token string,
		unsubscribeURL func(accountID, streamID, messageID int64, email string) string) (html, text string, err error)
	ArchiveIndex(ctx context.Context, publicID, base string) ([]byte, error)
	ArchivePage(ctx context.Context, publicID string, id int64) (html, text string, err error)
	Totals(ctx context.Context, accountID, campaignID int64) (api.Engagement, error)
	LinkStats(ctx context.Context, accountID, campaignID int64) ([]api.LinkClicks, error)
}

// archiveCSP is the policy of pages that show campaign content: no script runs
// (none is allowed, and the sandbox forbids it again), nothing is posted or
// framed; remote images and inline styles, which mail HTML relies on, are allowed.
const archiveCSP = "default-src 'none'; img-src https: data:; style-src 'unsafe-inline'; font-src https:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'; " +
	"sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation"

// trackNotFound answers a token or page that names nothing: 404, empty, uncached.
func trackNotFound(w http.ResponseWriter, err error) error {
	if apperr.Is(err, apperr.NotFound) {
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNotFound)
		return nil
	}
	return err
}

// followClick answers GET (and HEAD) /c/{token}: 302 to the URL stored for the
// link the token names, never anything from the request. The hit is held in
// memory and written by the flusher.
func (s *Server) followClick(w http.ResponseWriter, r *http.Request) error {
	url, err := s.Tracking.Click(r.Context(), chi.URLParam(r, "token"), r.Method, r.UserAgent())
	if err != nil {
		return trackNotFound(w, err)
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	if url == "" { // the honeypot
		writeHTML(w, []byte("<!doctype html><title>.</title>"))
		return nil
	}
	h.Set("Location", url)
	w.WriteHeader(http.StatusFound)
	return nil
}

// pixel is a transparent 1×1 GIF.
var pixel = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00" +
	",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// openPixel answers GET /o/{token}: the image, after holding the hit.
func (s *Server) openPixel(w http.ResponseWriter, r *http.Request) error {
	if err := s.Tracking.Open(chi.URLParam(r, "token"), r.Method, r.UserAgent()); err != nil {
		return trackNotFound(w, err)
	}
	h := w.Header()
	h.Set("Content-Type", "image/gif")
	h.Set("Cache-Control", "no-store, max-age=0")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pixel)
	return nil
}

// writeCampaignPage writes campaign content (web view, archive) under archiveCSP.
func writeCampaignPage(w http.ResponseWriter, page, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", archiveCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	body := page
	if strings.TrimSpace(body) == "" {
		body = "<!doctype html><meta charset=\"utf-8\"><pre style=\"white-space:pre-wrap\">" + html.EscapeString(text) + "</pre>"
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(body))
}

// webView answers GET /v/{token}: the message as its recipient got it, untracked:
// a campaign send's, or a single message's (tokens of their own purposes).
func (s *Server) webView(w http.ResponseWriter, r *http.Request) error {
	links := s.Unsubscribe.Signer().Links(s.opts.PublicURL, "")
	token := chi.URLParam(r, "token")
	page, text, err := s.Tracking.WebView(r.Context(), token, func(a, c, sub int64) string {
		u, _ := links(a, c, sub)
		return u
	})
	if apperr.Is(err, apperr.NotFound) {
		mlinks := s.Unsubscribe.Signer().MessageLinks(s.opts.PublicURL, "")
		page, text, err = s.Tracking.MessageWebView(r.Context(), token, func(a, stream, m int64, email string) string {
			u, _ := mlinks(a, stream, m, email)
			return u
		})
	}
	if err != nil {
		return trackNotFound(w, err)
	}
	w.Header().Set("Cache-Control", "private, no-store")
	writeCampaignPage(w, page, text)
	return nil
}

// archiveIndex answers GET /archive/{account_public_id}.
func (s *Server) archiveIndex(w http.ResponseWriter, r *http.Request) error {
	pub := chi.URLParam(r, "account_public_id")
	body, err := s.Tracking.ArchiveIndex(r.Context(), pub, "/archive/"+pub)
	if err != nil {
		return trackNotFound(w, err)
	}
	w.Header().Set("Cache-Control", "public, max-age=60")
	writeCampaignPage(w, string(body), "")
	return nil
}

// archivePage answers GET /archive/{account_public_id}/{id}.
func (s *Server) archivePage(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return trackNotFound(w, apperr.New(apperr.NotFound, "not found"))
	}
	page, text, err := s.Tracking.ArchivePage(r.Context(), chi.URLParam(r, "account_public_id"), id)
	if err != nil {
		return trackNotFound(w, err)
	}
	w.Header().Set("Cache-Control", "public, max-age=60")
	writeCampaignPage(w, page, text)
	return nil
}

// campaignClicks answers GET /v1/campaigns/{id}/clicks.
func (s *Server) campaignClicks(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	tot, err := s.Tracking.Totals(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	links, err := s.Tracking.LinkStats(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.CampaignClicks{CampaignId: id, Engagement: tot, Links: links})
}
