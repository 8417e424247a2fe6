package webhook

import (
	"fmt"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/text"
)

// checkText refuses a verified body whose JSON holds a string that is not storable
// text (NUL, invalid UTF-8, an unpaired surrogate escape): 422 naming each field by
// JSON pointer, prefix first (the SNS envelope's Message is a document of its own).
// Only verified bodies get this answer, so it tells an unsigned caller nothing.
func checkText(body []byte, prefix string) error {
	problems := text.CheckJSON(body)
	if len(problems) == 0 {
		return nil
	}
	fields := make([]apperr.FieldError, len(problems))
	for i, p := range problems {
		fields[i] = apperr.FieldError{Pointer: prefix + p.Pointer, Detail: prefix + p.Pointer + " " + p.Reason}
	}
	msg := "the webhook payload cannot be stored: " + fields[0].Detail
	if len(fields) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(fields)-1)
	}
	return &apperr.Error{Code: apperr.Invalid, Message: msg, Fields: fields}
}

// checkEvents is the last gate before events reach the database: every string an
// event carries, including those taken from headers (the webhook-id), is storable.
func checkEvents(events []Event) error {
	for _, e := range events {
		for _, f := range []struct{ name, v string }{{"id", e.ID}, {"type", e.Type}, {"email", e.Email},
			{"job_id", e.JobID}, {"provider_message_id", e.ProviderMessageID}} {
			if reason := text.Check(f.v); reason != "" {
				return &apperr.Error{Code: apperr.Invalid, Message: "the webhook event's " + f.name + " " + reason,
					Fields: []apperr.FieldError{{Pointer: "/" + f.name, Detail: f.name + " " + reason}}}
			}
		}
	}
	return nil
}
