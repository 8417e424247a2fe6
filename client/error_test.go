package client

import (
	"strings"
	"testing"
)

// A 422 whose detail is its one field error says it once.
func TestErrorSaysADetailOnce(t *testing.T) {
	detail := "email: not an address"
	e := &Error{Status: 422, Problem: Problem{Detail: &detail, Errors: &[]FieldError{{Pointer: "/email", Detail: detail}}}}
	if n := strings.Count(e.Error(), "not an address"); n != 1 {
		t.Fatalf("%q says the detail %d times", e.Error(), n)
	}
}
