package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"strings"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/idempotency"
)

// idempotency gives every POST that carries an Idempotency-Key Stripe's semantics
// (docs.stripe.com/api/idempotent_requests; the IETF httpapi draft "The
// Idempotency-Key HTTP Header Field" agrees on 409 and 422): the key is claimed with
// one INSERT … ON CONFLICT before the handler runs; the handler's response is stored
// and replayed to a retry with `Idempotent-Replayed: true`; the same key on another
// request is 422 and a retry while the first is still running is 409. Keys live 24
// hours. As at Stripe, results are saved only once execution began: a request refused
// as it stands (see storable) frees its key, so the corrected request can be sent
// again under the same key.
func (s *Server) idempotency(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, present := r.Header["Idempotency-Key"]
		if r.Method != http.MethodPost || !present {
			next.ServeHTTP(w, r)
			return
		}
		key, err := parseIdempotencyKey(raw)
		if err != nil {
			writeError(w, r, s.Logger, err)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, r, s.Logger, decodeError(err, s.bodyLimitOf(r)))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		hash := idempotency.Fingerprint(r.Method+" "+r.URL.RequestURI(), body)

		ctx, account := r.Context(), accountID(r)
		claimed, err := s.Idempotency.Claim(ctx, account, key, r.Method, r.URL.RequestURI(), hash, s.Now())
		if err != nil {
			writeError(w, r, s.Logger, err)
			return
		}
		if !claimed {
			s.replay(w, r, account, key, hash, body)
			return
		}

		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		saved := false
		defer func() {
			// A panic or a failed save frees the key, so the client can retry.
			if !saved {
				if err := s.Idempotency.Release(context.WithoutCancel(ctx), account, key); err != nil {
					s.Logger.ErrorContext(ctx, "idempotency: release key", "err", err)
				}
			}
		}()
		next.ServeHTTP(rec, r)
		if !storable(rec.status) {
			return // the deferred release frees the key
		}
		if err := s.Idempotency.Save(context.WithoutCancel(ctx), account, key, rec.status, rec.body.Bytes()); err != nil {
			s.Logger.ErrorContext(ctx, "idempotency: save response", "err", err)
			return
		}
		saved = true
		// Housekeeping rides on traffic: every purgeEvery-th stored response also
		// deletes a batch of expired keys, so the table stays about a day deep.
		if s.idemCount.Add(1)%purgeEvery == 0 {
			if _, err := s.Idempotency.Purge(context.WithoutCancel(ctx), s.Now(), purgeBatch); err != nil {
				s.Logger.WarnContext(ctx, "idempotency: purge expired keys", "err", err)
			}
		}
	})
}

// storable tells whether a response is the result of executing the request, to be
// replayed to every retry, rather than a refusal of the request as it stands. Refusals
// are not stored: 400, 413, 415 and 422 (malformed or invalid input, whether the spec
// check or the handler's own validation found it), 401 and 403, 429 and 503 (try again
// later). None of them changed anything, so running the retry afresh cannot duplicate
// an effect. Everything else is stored, errors included: a 404 or 409 reports the state
// the request met, and a 500 may have happened after a commit.
func storable(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusRequestEntityTooLarge,
		http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity, http.StatusTooManyRequests,
		http.StatusServiceUnavailable:
		return false
	}
	return true
}

// How often and how much the idempotency middleware purges expired keys.
const (
	purgeEvery = 100
	purgeBatch = 1000
)

// replay answers a request whose key is already claimed.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, account int64, key string, hash, body []byte) {
	prev, found, err := s.Idempotency.Get(r.Context(), account, key)
	if err == nil && !found {
		// Released between our claim attempt and this read: the client may retry.
		err = apperr.New(apperr.Conflict, "a request with this Idempotency-Key just failed; retry it")
	}
	if err != nil {
		writeError(w, r, s.Logger, err)
		return
	}
	if !bytes.Equal(prev.RequestHash, hash) && !bytes.Equal(prev.RequestHash, rawHash(r, body)) || prev.Method != r.Method {
		writeProblem(w, r, Problem{Type: problemBase + "idempotency_key_reused", Title: "Idempotency-Key reused",
			Status: http.StatusUnprocessableEntity,
			Detail: "this Idempotency-Key was used for a different request (" + prev.Method + " " + prev.Path + " with another body); use a new key"})
		return
	}
	if prev.Status == nil {
		w.Header().Set("Retry-After", "1")
		writeProblem(w, r, Problem{Type: problemBase + "idempotency_in_progress", Title: "Request in progress",
			Status: http.StatusConflict, Detail: "a request with this Idempotency-Key is still being processed; retry later"})
		return
	}
	status := *prev.Status
	w.Header().Set("Idempotent-Replayed", "true")
	if len(prev.Body) > 0 {
		ct := "application/json"
		if status >= 400 {
			ct = "application/problem+json"
		}
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(status)
	_, _ = w.Write(prev.Body)
}

// parseIdempotencyKey accepts a bare token (what Stripe clients send) or an RFC 8941
// sf-string (the IETF draft's "…" form), 1 to 255 printable ASCII characters.
func parseIdempotencyKey(raw []string) (string, error) {
	bad := apperr.Invalidf("/Idempotency-Key", "Idempotency-Key must be one value of 1 to 255 printable ASCII characters")
	if len(raw) != 1 {
		return "", bad
	}
	k := strings.TrimSpace(raw[0])
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		k = k[1 : len(k)-1]
	}
	if k == "" || len(k) > 255 {
		return "", bad
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "", bad
		}
	}
	return k, nil
}

// recorder passes a response through while keeping a copy to store.
type recorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// rawHash is the fingerprint keys were claimed with before idempotency.Fingerprint
// (the request URI and the raw body): a retry of a request a replica of the
// previous version claimed, within the keys' 24 hours, is still recognised.
func rawHash(r *http.Request, body []byte) []byte {
	h := sha256.New()
	_, _ = io.WriteString(h, r.Method+" "+r.URL.RequestURI()+"\n")
	h.Write(body)
	return h.Sum(nil)
}
