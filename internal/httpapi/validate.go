package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/sendonce/sendonce/internal/apperr"
)

// importPath is the one route with its own body limit; its body is validated row by
// row in the handler (rejects are reported per line, not as one 422).
const importPath = "/v1/subscribers/import"

// newSpecRouter loads openapi.yaml for request validation. Servers are dropped so a
// route matches on its path whatever host the service is reached at.
func newSpecRouter(spec []byte) (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	doc.Servers = nil
	return legacy.NewRouter(doc)
}

// bodyLimit caps every request body before anything reads it: the spec validator,
// the idempotency hash and the handler all see the same capped body. The import
// gets its own size and its own time (ImportTimeout replaces the server's read
// deadline, and extends its write deadline by as much).
func (s *Server) bodyLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := s.bodyLimitOf(r)
		if r.URL.Path == importPath && s.opts.ImportTimeout > 0 {
			// Not every ResponseWriter can (httptest's cannot): then the server's
			// deadlines, if any, stay.
			// The answer is written after the body is read (a 408 included), so the
			// write deadline is the read deadline plus the general write bound.
			rc := http.NewResponseController(w)
			deadline := time.Now().Add(s.opts.ImportTimeout)
			_ = rc.SetReadDeadline(deadline)
			var writeBy time.Time
			if s.opts.WriteTimeout > 0 {
				writeBy = deadline.Add(s.opts.WriteTimeout)
			}
			_ = rc.SetWriteDeadline(writeBy)
		}
		if r.ContentLength > limit {
			writeError(w, r, s.Logger, apperr.New(apperr.TooLarge, "the body exceeds %d bytes", limit))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// bodyLimitOf is the largest body r may carry: the import has its own limit,
// and so has a message, whose attachments travel in base64, and a layout, whose
// four fields of up to 512 KiB each (escaped in JSON) are more than
// SENDONCE_MAX_BODY_BYTES: under it, a field over its limit would answer 413
// for the body, not 422 naming the field.
func (s *Server) bodyLimitOf(r *http.Request) int64 {
	switch {
	case r.URL.Path == importPath:
		return s.opts.ImportMaxBytes
	case r.URL.Path == mediaPath && r.Method == http.MethodPost:
		return int64(s.Media.MaxBytes())
	case r.URL.Path == messagesPath && r.Method == http.MethodPost,
		r.URL.Path == campaignsPath && r.Method == http.MethodPost,
		isOnePath(r.URL.Path, campaignsPath) && r.Method == http.MethodPatch,
		r.URL.Path == templatesPath && r.Method == http.MethodPost,
		isOnePath(r.URL.Path, templatesPath) && r.Method == http.MethodPatch,
		r.URL.Path == layoutsPath && r.Method == http.MethodPost,
		isOnePath(r.URL.Path, layoutsPath) && r.Method == http.MethodPatch:
		if s.opts.MessageMaxBodyBytes > 0 {
			return s.opts.MessageMaxBodyBytes
		}
		return defaultMessageMaxBody
	}
	return s.opts.MaxBodyBytes
}

// messagesPath (POST), campaignsPath and templatesPath (POST, and PATCH of one)
// take bodies that may hold 10 MB of attachments; layoutsPath (POST, PATCH of
// one) bodies of four fields of up to 512 KiB each.
const (
	messagesPath  = "/v1/messages"
	campaignsPath = "/v1/campaigns"
	templatesPath = "/v1/templates"
	layoutsPath   = "/v1/layouts"
)

// isOnePath reports whether p is collection/{id}.
func isOnePath(p, collection string) bool {
	id, ok := strings.CutPrefix(p, collection+"/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// defaultMessageMaxBody is its body limit when the configuration gives none:
// 10 MB in base64 (13.4 MiB) and the rest of the message.
const defaultMessageMaxBody = 15 << 20

// validateRequest holds every request to openapi.yaml: the text of every string
// (checkText), the Content-Type (415 when the operation does not take it),
// parameters and body schema (additionalProperties: false rejects unknown fields).
// A mismatch is a 422 whose errors name each field by JSON pointer (/email,
// /list_ids/2, /limit). HEAD is checked as the GET it stands for. Routes the spec
// does not know fall through to the router's 404 or 405.
func (s *Server) validateRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probe := r
		if r.Method == http.MethodHead {
			probe = r.Clone(r.Context())
			probe.Method = http.MethodGet
		}
		route, params, err := s.spec.FindRoute(probe)
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		// The import's body and an uploaded image are the handler's alone to read
		// (a stream of rows; binary bytes, not text).
		isImport := (r.URL.Path == importPath || r.URL.Path == mediaPath) && r.Method == http.MethodPost
		if err := checkParamsText(r, params); err != nil {
			writeError(w, r, s.Logger, err)
			return
		}
		if !isImport {
			var body []byte
			var err error
			// Waiting for the client's body holds no in-flight slot (shed.go).
			admitted := awayFromSlot(r, func() { body, err = s.readBody(r) })
			if err != nil {
				writeError(w, r, s.Logger, err)
				return
			}
			if !admitted {
				s.shedRequest(w, r)
				return
			}
			if len(body) > 0 {
				if err := checkContentType(w, r, route); err != nil {
					writeError(w, r, s.Logger, err)
					return
				}
				if err := checkBodyText(body); err != nil {
					writeError(w, r, s.Logger, err)
					return
				}
			}
		} else {
			if r.ContentLength != 0 {
				if err := checkContentType(w, r, route); err != nil {
					writeError(w, r, s.Logger, err)
					return
				}
			}
			// The validator reads the whole body for its security check even when
			// told to skip the body; the import's body is the handler's alone to read.
			probe = probe.Clone(r.Context())
			probe.Body, probe.ContentLength = http.NoBody, 0
		}
		in := &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route,
			// SkipSettingDefaults: the validator would otherwise re-encode the body with
			// the schema's defaults filled in, and the handler would decode that instead
			// of what the client sent (`{} {}` passed as `{"grace_seconds":86400}`).
			Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
				RejectWhenRequestBodyNotSpecified: true, ExcludeRequestBody: isImport, SkipSettingDefaults: true}}
		if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
			writeError(w, r, s.Logger, requestProblem(err))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads the whole (already capped) body and puts it back for the next
// reader, so the checks here, the spec validator, the idempotency hash and the
// handler all see the same bytes.
func (s *Server) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyReadError(err, s.bodyLimitOf(r))
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return body, nil
}

// bodyReadError classifies a failed body read: too large (413), too slow (408, the
// read deadline of the server passed), or cut off by the client.
func bodyReadError(err error, limit int64) error {
	var maxErr *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &maxErr):
		return apperr.New(apperr.TooLarge, "the body exceeds %d bytes", limit)
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return &apperr.Error{Code: apperr.Timeout, Message: "the request body did not arrive in time", Err: err}
	}
	return &apperr.Error{Code: apperr.Invalid, Message: "the request body could not be read", Fields: []apperr.FieldError{{Pointer: "", Detail: "the request body could not be read"}}, Err: err}
}

// isReadError reports whether err comes from reading the body rather than from
// what it holds.
func isReadError(err error) bool {
	var maxErr *http.MaxBytesError
	var netErr net.Error
	return errors.As(err, &maxErr) || errors.As(err, &netErr) || errors.Is(err, os.ErrDeadlineExceeded)
}

// checkContentType answers 415, with Accept naming what the operation takes, when
// a body comes in a media type the operation does not declare (or with none).
func checkContentType(w http.ResponseWriter, r *http.Request, route *routers.Route) error {
	op := route.Operation
	if op == nil || op.RequestBody == nil || op.RequestBody.Value == nil || len(op.RequestBody.Value.Content) == 0 {
		return nil // a body where none is expected: the spec validator refuses it
	}
	content := op.RequestBody.Value.Content
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && content.Get(mt) != nil {
		return nil
	}
	accept := slices.Sorted(maps.Keys(content))
	w.Header().Set("Accept", strings.Join(accept, ", "))
	if ct == "" {
		return apperr.New(apperr.UnsupportedMediaType, "the body needs a Content-Type: %s", strings.Join(accept, " or "))
	}
	return apperr.New(apperr.UnsupportedMediaType, "Content-Type %q is not accepted here; send %s", ct, strings.Join(accept, " or "))
}

// requestProblem turns a kin-openapi validation error into one invalid-input error
// listing every offending field.
func requestProblem(err error) error {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return apperr.New(apperr.TooLarge, "the body exceeds %d bytes", maxErr.Limit)
	}
	var fields []apperr.FieldError
	collectFieldErrors(err, "", &fields)
	if len(fields) == 0 {
		fields = []apperr.FieldError{{Pointer: "", Detail: "the request does not match the API"}}
	}
	msg := fields[0].Detail
	if fields[0].Pointer != "" {
		msg = fields[0].Pointer + ": " + msg
	}
	if len(fields) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(fields)-1)
	}
	return &apperr.Error{Code: apperr.Invalid, Message: msg, Fields: fields, Err: err}
}

func collectFieldErrors(err error, prefix string, out *[]apperr.FieldError) {
	// A concrete type switch, not errors.As: a RequestError unwraps to the
	// MultiError of its schema errors, and the parameter name must not be lost.
	switch e := err.(type) {
	case openapi3.MultiError:
		for _, inner := range e {
			collectFieldErrors(inner, prefix, out)
		}
	case *openapi3filter.RequestError:
		var parseErr *openapi3filter.ParseError
		switch {
		case e.Parameter != nil:
			n := len(*out)
			if e.Err != nil {
				collectFieldErrors(e.Err, "/"+e.Parameter.Name, out)
			}
			for i := n; i < len(*out); i++ {
				(*out)[i].Pointer = "/" + e.Parameter.Name
			}
			if len(*out) == n {
				*out = append(*out, apperr.FieldError{Pointer: "/" + e.Parameter.Name, Detail: e.Reason})
			}
		case e.Err != nil && errors.As(e.Err, &parseErr):
			*out = append(*out, apperr.FieldError{Pointer: prefix, Detail: "the body is not valid JSON"})
		case e.Err != nil:
			collectFieldErrors(e.Err, prefix, out)
		default:
			detail := e.Reason
			if detail == "" {
				detail = "the request body is missing or malformed"
			}
			*out = append(*out, apperr.FieldError{Pointer: prefix, Detail: detail})
		}
	case *openapi3.SchemaError:
		ptr := prefix
		if p := e.JSONPointer(); len(p) > 0 {
			ptr += "/" + strings.Join(p, "/")
		}
		// A nullable field that refers to a schema (allOf: [$ref]) reports its
		// element's error (its pointer whole) under it: name the member inside.
		var inner *openapi3.SchemaError
		if e.Origin != nil && errors.As(e.Origin, &inner) && inner != e {
			collectFieldErrors(inner, prefix, out)
			return
		}
		// An unknown property is reported on its object; name the property itself.
		if strings.HasSuffix(e.Reason, "\" is unsupported") {
			if _, rest, ok := strings.Cut(e.Reason, `property "`); ok {
				if name, _, ok := strings.Cut(rest, `"`); ok {
					ptr += "/" + name
				}
			}
		}
		*out = append(*out, apperr.FieldError{Pointer: ptr, Detail: e.Reason})
	default:
		var wrapped interface{ Unwrap() error }
		if errors.As(err, &wrapped) && wrapped.Unwrap() != nil && wrapped.Unwrap() != err {
			collectFieldErrors(wrapped.Unwrap(), prefix, out)
			return
		}
		*out = append(*out, apperr.FieldError{Pointer: prefix, Detail: err.Error()})
	}
}
