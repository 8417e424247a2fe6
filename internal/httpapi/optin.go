package httpapi

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/cors"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
)

// SignUps serves the public sign-up form and double opt-in confirmations
// (optin.API); the pages come as their HTML.
type SignUps interface {
	// Signup signs an address up to lists of the form publicID names: whether a
	// list asks for confirmation, and the first list's language.
	Signup(ctx context.Context, publicID, email, name string, listIDs []int64) (confirm bool, language string, err error)
	ThanksPage(confirm bool, language string) []byte
	ErrorPage(detail string) []byte
	// ConfirmPage is the page a confirmation link opens; Confirm confirms and is
	// the page saying so.
	ConfirmPage(ctx context.Context, token string) ([]byte, error)
	Confirm(ctx context.Context, token string) ([]byte, error)
	// InvalidLink tells whether an error of theirs says the link is forged,
	// altered or expired, which InvalidLinkPage answers.
	InvalidLink(err error) bool
	InvalidLinkPage() []byte
}

// signupBodyLimit bounds a sign-up body: an address, a name and a few list ids.
const signupBodyLimit = 16 << 10

// honeypotField is the form field people never see (the form hides it) and bots
// fill in: a sign-up that carries it is answered like a success and changes nothing.
const honeypotField = "website"

// publicCORS lets any web site post the sign-up form from a browser (a tenant
// embeds it on its own pages), without credentials: the route takes no cookie or
// key, and a wildcard origin with credentials is refused by browsers anyway.
func publicCORS() func(http.Handler) http.Handler {
	return cors.Handler(cors.Options{
		AllowedOrigins:   []string{"*"},
		AllowedMethods:   []string{http.MethodPost},
		AllowedHeaders:   []string{"Content-Type", "X-Request-Id"},
		ExposedHeaders:   []string{"Retry-After", "X-Request-Id"},
		AllowCredentials: false,
		MaxAge:           600,
	})
}

// signupForm is a sign-up as read from a form or a JSON body.
type signupForm struct {
	Email, Name, Website string
	ListIDs              []int64
}

// isFormPost reports whether the body is an HTML form's (urlencoded or multipart):
// such a client gets pages back, a JSON client problem+json.
func isFormPost(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "application/x-www-form-urlencoded" || mt == "multipart/form-data"
}

// readSignup reads a form or JSON body.
func readSignup(w http.ResponseWriter, r *http.Request, form bool) (signupForm, error) {
	if !form {
		if r.Header.Get("Content-Type") == "" {
			w.Header().Set("Accept", "application/json, application/x-www-form-urlencoded")
			return signupForm{}, apperr.New(apperr.UnsupportedMediaType,
				"Content-Type must be application/x-www-form-urlencoded, multipart/form-data or application/json")
		}
		in, err := decodeChecked[api.SignupRequest](w, r, signupBodyLimit)
		return signupForm{Email: in.Email, Name: optional.Value(in.Name), Website: optional.Value(in.Website), ListIDs: in.ListIds}, err
	}
	r.Body = http.MaxBytesReader(w, r.Body, signupBodyLimit)
	if err := parseFormBody(r, signupBodyLimit); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return signupForm{}, apperr.New(apperr.TooLarge, "the body exceeds %d bytes", signupBodyLimit)
		}
		return signupForm{}, apperr.Invalidf("", "the form body does not parse")
	}
	f := signupForm{Email: r.PostFormValue("email"), Name: r.PostFormValue("name"), Website: r.PostFormValue(honeypotField)}
	for i, v := range r.PostForm["list_ids"] {
		id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || id < 1 {
			return signupForm{}, apperr.Invalidf("/list_ids/"+strconv.Itoa(i), "a list id is a positive integer")
		}
		f.ListIDs = append(f.ListIDs, id)
	}
	return f, nil
}

// publicSignup answers POST /p/{account_public_id}/subscribe, the public sign-up
// form. Limits come first (per client address, then per account), before the body
// is read or the database asked. The answer depends on the lists alone, never on
// the address. Form posts get HTML pages (errors too); JSON clients get 202 or
// problem+json.
func (s *Server) publicSignup(w http.ResponseWriter, r *http.Request) error {
	form := isFormPost(r)
	fail := func(err error) error {
		if form {
			return s.signupErrorPage(w, r, err)
		}
		return err
	}
	publicID := chi.URLParam(r, "account_public_id")
	now := time.Now()
	for _, lim := range []struct {
		l   *keyedLimits
		key string
		msg string
	}{
		{s.signupAddrs, s.clientAddr(r), "too many sign-ups from this address; retry after %d s"},
		{s.signupAccounts, publicID, "too many sign-ups to this form; retry after %d s"},
	} {
		if d := lim.l.take(lim.key, now); d > 0 {
			return fail(s.retryAfter(w, d, lim.msg))
		}
	}
	in, err := readSignup(w, r, form)
	if err != nil {
		return fail(err)
	}
	confirm, language := true, ""
	if in.Website != "" {
		s.Logger.InfoContext(r.Context(), "sign-up honeypot filled: ignored", "form", publicID, "client", s.clientAddr(r))
	} else {
		confirm, language, err = s.Optin.Signup(r.Context(), publicID, in.Email, in.Name, in.ListIDs)
		if err != nil {
			return fail(err)
		}
	}
	if form {
		writeHTML(w, s.Optin.ThanksPage(confirm, language))
		return nil
	}
	w.Header().Set("Cache-Control", "no-store")
	return encode(w, http.StatusAccepted, api.SignupAccepted{Status: api.Accepted, ConfirmationRequired: confirm})
}

// retryAfter sets Retry-After (whole seconds, at least 1) and returns the 429 error.
func (s *Server) retryAfter(w http.ResponseWriter, delay time.Duration, format string) error {
	secs := int(delay.Seconds() + 0.999)
	if secs < 1 {
		secs = 1
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return apperr.New(apperr.RateLimited, format, secs)
}

// signupErrorPage answers a refused form post with a page saying why, under the
// status a JSON client would get. Internal errors go the usual way (logged, fixed text).
func (s *Server) signupErrorPage(w http.ResponseWriter, r *http.Request, err error) error {
	var e *apperr.Error
	if !errors.As(postgres.Translate(err), &e) || e.Code == apperr.Internal || statusOf[e.Code] == 0 {
		return err
	}
	detail := e.Message
	if len(e.Fields) > 0 {
		detail = e.Fields[0].Detail
	}
	writeHTMLStatus(w, statusOf[e.Code], s.Optin.ErrorPage(detail))
	return nil
}

// confirmPage answers GET /p/confirm/{token}: what confirming subscribes to and a
// button that POSTs. It changes nothing: mail scanners open links on their own.
func (s *Server) confirmPage(w http.ResponseWriter, r *http.Request) error {
	page, err := s.Optin.ConfirmPage(r.Context(), chi.URLParam(r, "token"))
	if err != nil {
		return s.confirmError(w, err)
	}
	writeHTML(w, page)
	return nil
}

// confirmPost answers POST /p/confirm/{token}: the address confirms. The body, if
// any, is ignored.
func (s *Server) confirmPost(w http.ResponseWriter, r *http.Request) error {
	page, err := s.Optin.Confirm(r.Context(), chi.URLParam(r, "token"))
	if err != nil {
		return s.confirmError(w, err)
	}
	writeHTML(w, page)
	return nil
}

// confirmError shows the invalid-link page (404) for a forged, altered or expired
// token; other errors go the usual way.
func (s *Server) confirmError(w http.ResponseWriter, err error) error {
	if s.Optin.InvalidLink(err) {
		writeHTMLStatus(w, http.StatusNotFound, s.Optin.InvalidLinkPage())
		return nil
	}
	return err
}
