// Package apperr is the one error type the domain packages return. The HTTP layer
// maps its codes to statuses and RFC 9457 bodies in one place.
package apperr

import (
	"errors"
	"fmt"
)

// Code classifies an error for callers; it decides the HTTP status.
type Code string

// The error codes.
const (
	NotFound     Code = "not_found"
	Invalid      Code = "invalid"
	Conflict     Code = "conflict"
	Unauthorized Code = "unauthorized"
	// Forbidden is a request the caller is authenticated for but may not make
	// (a list its key is not given, an approval four eyes reserve for another).
	Forbidden Code = "forbidden"
	// PermissionDenied is a request whose route needs a permission the caller
	// does not hold; Extra["missing_permission"] names it.
	PermissionDenied Code = "permission-denied"
	// AccountSuspended is a request of an account its operator suspended (403).
	AccountSuspended Code = "account-suspended"
	// QuotaExceeded is a write past a size-like quota the operator set (403);
	// Extra names the quota, its limit and what is used.
	QuotaExceeded Code = "quota-exceeded"
	// DailyQuotaExceeded is a message past the account's messages_per_day quota
	// (429); Extra names the quota, its limit, what is used, and retry_after, the
	// seconds to the next UTC midnight (the Retry-After).
	DailyQuotaExceeded Code = "daily-quota-exceeded"
	RateLimited        Code = "rate_limited"
	TooLarge           Code = "too_large"
	// UnsupportedMediaType is a body in a Content-Type the operation does not take.
	UnsupportedMediaType Code = "unsupported_media_type"
	// Timeout is a request whose body did not arrive in time.
	Timeout Code = "timeout"
	// Unavailable is a dependency (the database) that cannot be reached now; the
	// same request may succeed when retried later.
	Unavailable Code = "unavailable"
	// DatabaseTimeout is a statement the database stopped because it ran past its
	// statement_timeout or waited past its lock_timeout; nothing it did was kept,
	// and the same request may succeed when retried later.
	DatabaseTimeout Code = "database_timeout"
	Internal        Code = "internal"
)

// FieldError names one invalid input field, as a JSON pointer into the request.
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
	// Line is the 1-based line of the field's text the error is on (a template's
	// parse or execution error), 0 (omitted) when it is not about one line.
	Line int `json:"line,omitempty"`
}

// Error is an application error with a code, a human message safe to show to the
// caller, optional per-field details, and optional extra members for the problem body.
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
	// Extra holds additional problem members, such as the current status on a 409.
	Extra map[string]any
	// Err is the underlying cause; it is logged, never shown.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalidf returns an invalid-input error naming one field by JSON pointer.
func Invalidf(pointer, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Code: Invalid, Message: msg, Fields: []FieldError{{Pointer: pointer, Detail: msg}}}
}

// CodeOf returns the code of err, or Internal when err is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }
