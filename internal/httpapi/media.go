package httpapi

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
)

// MediaLibrary is the accounts' image libraries (media.API): images are answered
// with their addresses under the account's public id.
type MediaLibrary interface {
	// MaxBytes is the largest image an upload may carry.
	MaxBytes() int
	Upload(ctx context.Context, accountID int64, publicID, name, declared string, body []byte) (m api.Media, created bool, err error)
	List(ctx context.Context, accountID int64, publicID string, beforeID *int64, limit int) ([]api.Media, error)
	Get(ctx context.Context, accountID int64, publicID string, id int64) (api.Media, error)
	Delete(ctx context.Context, accountID, id int64, publicID string) error
	// Public is an image's type and bytes, by its public address.
	Public(ctx context.Context, publicID, file string) (contentType string, body []byte, err error)
}

// mediaPath is the upload route, whose body (an image's bytes) the handler
// reads itself: it is binary, not the text the validator checks.
const mediaPath = "/v1/media"

// publicID is the account's public id, the prefix of its images' addresses.
func (s *Server) publicID(r *http.Request) (string, error) {
	a, err := s.Accounts.Get(r.Context(), accountID(r))
	if err != nil {
		return "", err
	}
	return a.PublicID, nil
}

// uploadMedia stores the body as an image of the library: 201, or 200 with the
// stored image when the account already had these bytes.
func (s *Server) uploadMedia(w http.ResponseWriter, r *http.Request) error {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	// The validator answered 415 to any other type (image/svg+xml included).
	if err != nil || ct != "application/octet-stream" && ct != "image/png" && ct != "image/jpeg" && ct != "image/gif" && ct != "image/webp" {
		w.Header().Set("Accept", "image/png, image/jpeg, image/gif, image/webp, application/octet-stream")
		return apperr.New(apperr.UnsupportedMediaType, "Content-Type must be image/png, image/jpeg, image/gif, image/webp or application/octet-stream")
	}
	var body []byte
	// Waiting for the client's body holds no in-flight slot (shed.go).
	admitted := awayFromSlot(r, func() { body, err = io.ReadAll(r.Body) })
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return apperr.New(apperr.TooLarge, "an image is at most %d bytes", s.Media.MaxBytes())
		}
		return err
	}
	if !admitted {
		s.shedRequest(w, r)
		return nil
	}
	pub, err := s.publicID(r)
	if err != nil {
		return err
	}
	m, created, err := s.Media.Upload(r.Context(), accountID(r), pub, r.URL.Query().Get("name"), ct, body)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return encode(w, status, m)
}

func (s *Server) listMedia(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "media")
	if err != nil {
		return err
	}
	var before *int64
	if p.AfterID > 0 {
		before = &p.AfterID
	}
	pub, err := s.publicID(r)
	if err != nil {
		return err
	}
	rows, err := s.Media.List(r.Context(), accountID(r), pub, before, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "media", p, rows, func(m api.Media) cursor { return cursor{ID: m.Id} })
	return encode(w, http.StatusOK, api.MediaPage{Data: rows, NextCursor: next})
}

func (s *Server) getMedia(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	pub, err := s.publicID(r)
	if err != nil {
		return err
	}
	m, err := s.Media.Get(r.Context(), accountID(r), pub, id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, m)
}

func (s *Server) deleteMedia(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	pub, err := s.publicID(r)
	if err != nil {
		return err
	}
	if err := s.Media.Delete(r.Context(), accountID(r), id, pub); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mediaFile serves an image of an account's library, publicly: its address is
// its content's hash, so it is cached for a year and never changes; nosniff and
// a sandboxing policy keep a browser from reading it as anything but an image.
func (s *Server) mediaFile(w http.ResponseWriter, r *http.Request) error {
	file := chi.URLParam(r, "file")
	ct, body, err := s.Media.Public(r.Context(), chi.URLParam(r, "account_public_id"), file)
	if err != nil {
		return err
	}
	etag := `"` + file + `"`
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}
