package httpapi

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/logging"
	"github.com/sendonce/sendonce/internal/postgres"
)

// problemBase prefixes every problem type; the last segment names the error code.
const problemBase = "https://sendonce.dev/problems/"

// Problem is an RFC 9457 problem details body.
type Problem struct {
	Type      string              `json:"type"`
	Title     string              `json:"title"`
	Status    int                 `json:"status"`
	Detail    string              `json:"detail,omitempty"`
	Instance  string              `json:"instance,omitempty"`
	RequestID string              `json:"request_id,omitempty"`
	Errors    []apperr.FieldError `json:"errors,omitempty"`
	Extra     map[string]any      `json:"-"`
}

// MarshalJSON flattens Extra into the body, as RFC 9457 extension members.
func (p Problem) MarshalJSON() ([]byte, error) {
	type plain Problem
	b, err := json.Marshal(plain(p))
	if err != nil || len(p.Extra) == 0 {
		return b, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range p.Extra {
		if _, taken := m[k]; !taken {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

var statusOf = map[apperr.Code]int{
	apperr.NotFound:     http.StatusNotFound,
	apperr.Invalid:      http.StatusUnprocessableEntity,
	apperr.Conflict:     http.StatusConflict,
	apperr.Unauthorized: http.StatusUnauthorized,
	apperr.Forbidden:    http.StatusForbidden,

	apperr.PermissionDenied: http.StatusForbidden,
	apperr.AccountSuspended: http.StatusForbidden,
	apperr.QuotaExceeded:    http.StatusForbidden,
	apperr.RateLimited:      http.StatusTooManyRequests,

	apperr.DailyQuotaExceeded: http.StatusTooManyRequests,
	apperr.TooLarge:           http.StatusRequestEntityTooLarge,
	apperr.Internal:           http.StatusInternalServerError,

	apperr.UnsupportedMediaType: http.StatusUnsupportedMediaType,
	apperr.Timeout:              http.StatusRequestTimeout,
	apperr.Unavailable:          http.StatusServiceUnavailable,
	apperr.DatabaseTimeout:      http.StatusServiceUnavailable,
}

var titleOf = map[apperr.Code]string{
	apperr.NotFound:     "Not found",
	apperr.Invalid:      "Invalid request",
	apperr.Conflict:     "Conflict",
	apperr.Unauthorized: "Unauthorized",
	apperr.Forbidden:    "Forbidden",

	apperr.PermissionDenied: "Forbidden",
	apperr.AccountSuspended: "Account suspended",
	apperr.QuotaExceeded:    "Quota exceeded",
	apperr.RateLimited:      "Too many requests",

	apperr.DailyQuotaExceeded: "Daily quota exceeded",
	apperr.TooLarge:           "Request body too large",
	apperr.Internal:           "Internal server error",

	apperr.UnsupportedMediaType: "Unsupported media type",
	apperr.Timeout:              "Request timeout",
	apperr.Unavailable:          "Service unavailable",
	apperr.DatabaseTimeout:      "Database timeout",
}

// unavailableRetryAfter is the Retry-After of a 503 (unavailable, database_timeout):
// long enough for a database restart or failover to finish, short enough that a
// client does not give up.
const unavailableRetryAfter = "5"

// writeError answers err as problem+json. It is the one place errors become
// responses: an *apperr.Error shows its message; a database error nobody
// classified is classified here (data errors are the client's 4xx, a database out
// of reach or a statement past its timeout is 503 with Retry-After); anything else is logged with the request id
// and answered with a fixed message.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	before := apperr.CodeOf(err)
	err = postgres.Translate(err)
	var e *apperr.Error
	if code := apperr.CodeOf(err); code != before {
		// A database error reached the edge unclassified: answered, but worth a look.
		log.WarnContext(r.Context(), "database error answered as "+string(code), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if apperr.Is(err, apperr.Unavailable) || apperr.Is(err, apperr.DatabaseTimeout) {
		w.Header().Set("Retry-After", unavailableRetryAfter)
	}
	if errors.As(err, &e) && e.Code == apperr.DailyQuotaExceeded {
		if secs, ok := e.Extra["retry_after"].(int); ok {
			w.Header().Set("Retry-After", strconv.Itoa(secs))
		}
	}
	if !errors.As(err, &e) || e.Code == apperr.Internal {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		e = &apperr.Error{Code: apperr.Internal, Message: "an internal error occurred; quote the request id when reporting it"}
	}
	writeProblem(w, r, problemOf(e))
}

// problemOf is the problem body of an application error.
func problemOf(e *apperr.Error) Problem {
	return Problem{
		Type:   problemBase + string(e.Code),
		Title:  titleOf[e.Code],
		Status: statusOf[e.Code],
		Detail: e.Message,
		Errors: e.Fields,
		Extra:  e.Extra,
	}
}

// writeProblem writes p with the request id filled in. Every 401 leaves here, so
// this is where it gets the challenge RFC 9110 §15.5.2 requires of every 401.
func writeProblem(w http.ResponseWriter, r *http.Request, p Problem) {
	p.RequestID = logging.RequestID(r.Context())
	p.Instance = r.URL.Path
	if p.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", challenge(r))
	}
	body, err := json.Marshal(p)
	if err != nil {
		body = []byte(`{"type":"about:blank","title":"Internal server error","status":500}`)
		p.Status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

// challenge is the WWW-Authenticate of a 401: the API's scheme is Bearer (the
// dashboard's session cookie stands in for a key, and has no scheme of its own),
// with error="invalid_token" when the request presented a bearer key or a stream
// token that did not hold, and no error code when it presented none (RFC 6750 §3.1).
func challenge(r *http.Request) string {
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	presented := strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != ""
	if r.Header.Get("Authorization") == "" && r.URL.Query().Get("token") != "" && routePattern(r) == streamRoute {
		presented = true
	}
	if presented {
		return `Bearer realm="sendonce", error="invalid_token"`
	}
	return `Bearer realm="sendonce"`
}
