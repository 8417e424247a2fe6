package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/sendonce/sendonce/internal/apperr"
)

// Error translates a database error into an application error: no rows becomes
// not_found, a unique violation conflict, a check or foreign-key violation invalid,
// and the rest as Translate does.
func Error(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return &apperr.Error{Code: apperr.NotFound, Message: what + " not found", Err: err}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return &apperr.Error{Code: apperr.Conflict, Message: what + " already exists", Err: err}
		case "23514", "23503", "22P02", "22001":
			return &apperr.Error{Code: apperr.Invalid, Message: what + " is not valid", Err: err}
		}
	}
	return Translate(err)
}

// Translate is the backstop for database errors no caller classified. Errors caused
// by the data of a request (class 22 data exceptions, class 23 integrity violations,
// 54 program limits) are the client's: invalid or conflict, never internal. A
// database that cannot be reached or is going away (refused or lost connections,
// class 08, 57P01–57P03, class 53, a closed pool, serialization failures and
// deadlocks that a retry resolves) is unavailable. Anything else, including errors
// that are not from the database, is returned as it is.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Code != apperr.Internal {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return translateCode(err, pgErr.Code)
	}
	if Unreachable(err) {
		return &apperr.Error{Code: apperr.Unavailable, Message: "the database is not reachable; retry later", Err: err}
	}
	return err
}

func translateCode(err error, code string) error {
	class := code[:min(2, len(code))]
	switch {
	case class == "22":
		return &apperr.Error{Code: apperr.Invalid, Message: "a value in the request cannot be stored (" + dataReason(code) + ")", Err: err}
	case code == "23505" || code == "23P01" || code == "23001":
		return &apperr.Error{Code: apperr.Conflict, Message: "the request conflicts with the current state", Err: err}
	case class == "23":
		return &apperr.Error{Code: apperr.Invalid, Message: "the request violates a constraint of the data", Err: err}
	case class == "54":
		return &apperr.Error{Code: apperr.Invalid, Message: "a value in the request is too large or too complex to store", Err: err}
	case class == "08" || class == "53" || code == "57P01" || code == "57P02" || code == "57P03" ||
		code == "40001" || code == "40P01" || code == "55P03":
		return &apperr.Error{Code: apperr.Unavailable, Message: "the database is not available; retry later", Err: err}
	}
	return err
}

// dataReason names the common data exceptions in words a client can act on.
func dataReason(code string) string {
	switch code {
	case "22021", "22P05":
		return "text must be valid UTF-8 without NUL characters"
	case "22001":
		return "a string is too long"
	case "22003":
		return "a number is out of range"
	case "22007", "22008":
		return "a date or time is out of range"
	}
	return "invalid value"
}

// Unreachable reports whether err means the database could not be reached or the
// connection to it was lost, as opposed to the database refusing a statement.
// Network errors count only when pgconn raised them: a provider's or a client's
// network error is not the database's.
func Unreachable(err error) bool {
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || errors.Is(err, puddle.ErrClosedPool) || errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	// pgconn's own errors on a live connection (pgconnError, errTimeout) all
	// implement SafeToRetry; that marks the error as the driver's.
	var fromDriver interface{ SafeToRetry() bool }
	if !errors.As(err, &fromDriver) {
		return false
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case pgconn.Timeout(err) && !errors.Is(err, context.Canceled):
		// A deadline inside the server (acquiring a connection, a statement) ran out.
		return true
	}
	return false
}
