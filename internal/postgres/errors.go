package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgerrcode"
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
	if NoRows(err) {
		return &apperr.Error{Code: apperr.NotFound, Message: what + " not found", Err: err}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case pgerrcode.UniqueViolation:
			return &apperr.Error{Code: apperr.Conflict, Message: what + " already exists", Err: err}
		case pgerrcode.CheckViolation, pgerrcode.ForeignKeyViolation, pgerrcode.InvalidTextRepresentation,
			pgerrcode.StringDataRightTruncationDataException:
			return &apperr.Error{Code: apperr.Invalid, Message: what + " is not valid", Err: err}
		}
	}
	return Translate(err)
}

// Translate is the backstop for database errors no caller classified. Errors caused
// by the data of a request (class 22 data exceptions, class 23 integrity violations,
// 54 program limits) are the client's: invalid or conflict, never internal. A
// statement stopped by statement_timeout or lock_timeout (57014, 55P03) is a
// database_timeout. A database that cannot be reached or is going away (refused
// or lost connections, class 08, 57P01–57P03, class 53, a closed pool) and
// serialization failures and deadlocks, which a retry resolves, are unavailable. Anything else, including errors
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
	switch {
	case InClass(code, pgerrcode.DataException):
		return &apperr.Error{Code: apperr.Invalid, Message: "a value in the request cannot be stored (" + dataReason(code) + ")", Err: err}
	case code == pgerrcode.UniqueViolation || code == pgerrcode.ExclusionViolation || code == pgerrcode.RestrictViolation:
		return &apperr.Error{Code: apperr.Conflict, Message: "the request conflicts with the current state", Err: err}
	case InClass(code, pgerrcode.IntegrityConstraintViolation):
		return &apperr.Error{Code: apperr.Invalid, Message: "the request violates a constraint of the data", Err: err}
	case InClass(code, pgerrcode.ProgramLimitExceeded):
		return &apperr.Error{Code: apperr.Invalid, Message: "a value in the request is too large or too complex to store", Err: err}
	case code == pgerrcode.QueryCanceled || code == pgerrcode.LockNotAvailable:
		// statement_timeout (or a cancel) and lock_timeout: the statement was stopped
		// and rolled back; the same request may pass when the database is less busy.
		return &apperr.Error{Code: apperr.DatabaseTimeout, Message: "the database did not answer in time; retry later", Err: err}
	case code == pgerrcode.SerializationFailure || code == pgerrcode.DeadlockDetected:
		// Lost to a concurrent transaction; nothing was kept, and a retry resolves it.
		return &apperr.Error{Code: apperr.Unavailable, Message: "the request collided with a concurrent change; retry it", Err: err}
	case InClass(code, pgerrcode.ConnectionException) || InClass(code, pgerrcode.InsufficientResources) ||
		code == pgerrcode.AdminShutdown || code == pgerrcode.CrashShutdown || code == pgerrcode.CannotConnectNow:
		return &apperr.Error{Code: apperr.Unavailable, Message: "the database is not available; retry later", Err: err}
	}
	return err
}

// FromServer reports whether err carries the database server's answer to a
// statement (an error it raised, which rolled its statement back), as opposed to
// an error of the driver, the network or the caller.
func FromServer(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr)
}

// Message is the database server's message of err ("" when err carries no server
// answer): the words PostgreSQL gives a refused jsonpath, for example, which a
// caller may show to the client that wrote it.
func Message(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message
	}
	return ""
}

// Severity is the severity of the database server's answer in err (ERROR, FATAL,
// PANIC), "" when err carries none. An ERROR ends the statement and its
// transaction; a FATAL ends the session, saying nothing of a commit already made.
func Severity(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity
	}
	return ""
}

// NoRows reports whether err is a query's "no row" answer: for a compare-and-set
// it means another writer won, for a lookup that nothing matched. The one place
// outside the driver that names pgx's sentinel; callers above ask here.
func NoRows(err error) bool {
	return errors.Is(err, pgx.ErrNoRows)
}

// Code returns the SQLSTATE of a database error (a *pgconn.PgError anywhere in
// err's chain), "" for any other error. Callers compare it with pgerrcode's names,
// never with literals.
func Code(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// IsCode reports whether err is a database error with one of codes.
func IsCode(err error, codes ...string) bool {
	c := Code(err)
	if c == "" {
		return false
	}
	for _, code := range codes {
		if c == code {
			return true
		}
	}
	return false
}

// InClass reports whether code belongs to the class of class (the first two
// characters of a SQLSTATE, e.g. pgerrcode.DataException for class 22), whether
// or not pgerrcode names that particular code.
func InClass(code, class string) bool {
	return len(code) == 5 && len(class) == 5 && code[:2] == class[:2]
}

// dataReason names the common data exceptions in words a client can act on.
func dataReason(code string) string {
	switch code {
	case pgerrcode.CharacterNotInRepertoire, pgerrcode.UntranslatableCharacter:
		return "text must be valid UTF-8 without NUL characters"
	case pgerrcode.StringDataRightTruncationDataException:
		return "a string is too long"
	case pgerrcode.NumericValueOutOfRange:
		return "a number is out of range"
	case pgerrcode.InvalidDatetimeFormat, pgerrcode.DatetimeFieldOverflow:
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
