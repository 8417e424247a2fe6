package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
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
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		return v, decodeError(err, maxBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			if ptr, ok := pointerAt(raw, typeErr.Offset); ok {
				return v, apperr.Invalidf(ptr, "%s must be of type %s", ptr, typeErr.Type.String())
			}
		}
		return v, decodeError(err, maxBytes)
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return v, apperr.Invalidf("", "the body must hold a single JSON object")
	}
	return v, nil
}

// decodeUpdate is decode for an update that can clear a field by sending it as
// null: it also reports which of the object's members were null, which a pointer
// field alone cannot tell from absent. (Ids are ≥ 1, so 0 never means "none".)
func decodeUpdate[T any](w http.ResponseWriter, r *http.Request, maxBytes int64) (T, map[string]bool, error) {
	var v T
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		return v, nil, decodeError(err, maxBytes)
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if v, err = decode[T](w, r, maxBytes); err != nil {
		return v, nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return v, nil, decodeError(err, maxBytes)
	}
	nulls := map[string]bool{}
	for name, m := range members {
		if string(m) == "null" {
			nulls[name] = true
		}
	}
	return v, nulls, nil
}

// pointerAt is the RFC 6901 pointer of the value of doc that ends at offset (a
// scalar) or opens just before it (an array or object): where encoding/json reports
// a value of the wrong type or out of range. Its own field path leaves out array
// indices ("steps.template_id"), which would not say which step is wrong.
func pointerAt(doc []byte, offset int64) (string, bool) {
	type frame struct {
		object bool
		key    string // the current member's name; "" until read
		index  int    // the current element's index
		keyed  bool   // the member's name was read, its value is next
	}
	var path []frame
	ptr := func() string {
		var b strings.Builder
		for _, f := range path {
			b.WriteByte('/')
			if f.object {
				b.WriteString(pointerEscaper.Replace(f.key))
			} else {
				b.WriteString(strconv.Itoa(f.index))
			}
		}
		return b.String()
	}
	// done moves the innermost container past the value just read.
	done := func() {
		if n := len(path); n > 0 {
			if path[n-1].object {
				path[n-1].keyed = false
			} else {
				path[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(path); n > 0 && path[n-1].object && !path[n-1].keyed {
			if k, ok := tok.(string); ok { // a member's name, not a value
				path[n-1].key, path[n-1].keyed = k, true
				continue
			}
		}
		// The token is a value (or a closing delimiter).
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			path = path[:len(path)-1]
			done()
			continue
		}
		if dec.InputOffset() == offset {
			return ptr(), true
		}
		switch tok {
		case json.Delim('{'):
			path = append(path, frame{object: true})
		case json.Delim('['):
			path = append(path, frame{})
		default:
			done()
		}
	}
}

// pointerEscaper escapes a member name for a JSON pointer (RFC 6901 §3).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

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
