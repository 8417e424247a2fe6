package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/sendonce/sendonce/internal/apperr"
)

// decode reads one JSON object from the request body into v: the body must be JSON,
// within maxBytes, with no unknown fields and nothing after the object. Its strings
// have already passed checkBodyText in validateRequest.
func decode[T any](w http.ResponseWriter, r *http.Request, maxBytes int64) (T, error) {
	var v T
	if err := jsonContentType(w, r); err != nil {
		return v, err
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, decodeError(err, maxBytes)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return v, apperr.Invalidf("", "the body must hold a single JSON object")
	}
	return v, nil
}

// decodeChecked is decode for routes outside validateRequest (the public ones):
// the body's strings pass the same text gate (valid UTF-8, no NUL, no unpaired
// surrogate escape) before it is decoded.
func decodeChecked[T any](w http.ResponseWriter, r *http.Request, maxBytes int64) (T, error) {
	var v T
	if err := jsonContentType(w, r); err != nil {
		return v, err
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		return v, decodeError(err, maxBytes)
	}
	if err := checkBodyText(raw); err != nil {
		return v, err
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return decode[T](w, r, maxBytes)
}

// jsonContentType refuses a body declared as anything but JSON (none is taken as JSON).
func jsonContentType(w http.ResponseWriter, r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			w.Header().Set("Accept", "application/json")
			return apperr.New(apperr.UnsupportedMediaType, "Content-Type must be application/json")
		}
	}
	return nil
}

// decodeError turns a json or body-size error into a clear invalid-input error.
func decodeError(err error, maxBytes int64) error {
	var maxErr *http.MaxBytesError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &maxErr):
		return apperr.New(apperr.TooLarge, "the body exceeds %d bytes", maxBytes)
	case errors.Is(err, io.EOF):
		return apperr.Invalidf("", "the body is empty; a JSON object is required")
	case errors.As(err, &syntaxErr):
		return apperr.Invalidf("", "malformed JSON at byte %d", syntaxErr.Offset)
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return apperr.Invalidf("", "the body must be a JSON object")
	case errors.As(err, &typeErr):
		ptr := "/" + strings.ReplaceAll(typeErr.Field, ".", "/")
		return apperr.Invalidf(ptr, "%s must be of type %s", typeErr.Field, typeErr.Type.String())
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apperr.Invalidf("/"+field, "unknown field %q", field)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.Invalidf("", "truncated JSON body")
	default:
		return apperr.Invalidf("", "invalid JSON body: %s", err.Error())
	}
}

// encode writes v as JSON with status. It marshals before writing the header so a
// marshalling failure can still become a 500. HTML is not escaped: campaign templates
// come back as written, not as \u003cp\u003e.
func encode(w http.ResponseWriter, status int, v any) error {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body.Bytes())
	return nil
}
