package httpapi

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/text"
)

// The checks below are the one gate for client text on the tenant API: every path
// parameter, query parameter and JSON body string (member names included, at any
// depth) must be valid UTF-8 without NUL, or the request is a 422 naming each field.
// They run in validateRequest, before the spec validator and any handler, so no
// handler needs its own.

// checkParamsText checks the path parameters of the matched route and every query
// parameter (names and values).
func checkParamsText(r *http.Request, pathParams map[string]string) error {
	var fields []apperr.FieldError
	for _, name := range sortedKeys(pathParams) {
		if reason := text.Check(pathParams[name]); reason != "" {
			fields = append(fields, apperr.FieldError{Pointer: "/" + text.EscapePointer(name), Detail: name + " " + reason})
		}
	}
	query := r.URL.Query()
	for _, name := range sortedKeys(query) {
		ptr := "/" + text.EscapePointer(text.Printable(name))
		if reason := text.Check(name); reason != "" {
			fields = append(fields, apperr.FieldError{Pointer: ptr, Detail: "the name of a query parameter " + reason})
			continue
		}
		for _, v := range query[name] {
			if reason := text.Check(v); reason != "" {
				fields = append(fields, apperr.FieldError{Pointer: ptr, Detail: name + " " + reason})
				break
			}
		}
	}
	return textProblem(fields)
}

// checkBodyText checks every string of a JSON body on its raw bytes.
func checkBodyText(body []byte) error {
	var fields []apperr.FieldError
	for _, p := range text.CheckJSON(body) {
		what := p.Pointer
		if what == "" {
			what = "the body"
		}
		fields = append(fields, apperr.FieldError{Pointer: p.Pointer, Detail: what + " " + p.Reason})
	}
	return textProblem(fields)
}

// textProblem is the 422 for refused text, or nil when there is none.
func textProblem(fields []apperr.FieldError) error {
	if len(fields) == 0 {
		return nil
	}
	msg := fields[0].Detail
	if len(fields) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(fields)-1)
	}
	return &apperr.Error{Code: apperr.Invalid, Message: msg, Fields: fields}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
