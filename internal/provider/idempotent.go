package provider

// IdempotentKind is the one statement of which providers drop a second message
// with the same idempotency key (our job id), so that a send interrupted or
// answered ambiguously may be replayed without a second copy reaching anyone: the
// HTTP provider (the server keeps one result per Idempotency-Key), Resend (which
// keeps keys for a day) and the log (it delivers nothing). SMTP cannot be asked
// "did you already take this one?", and Postmark, SendGrid, Mailgun and SES take
// no idempotency key. kind is a sender type or SENDONCE_PROVIDER's value. Every
// provider's Idempotent method, the senders' API field and (through what the
// executor records on each row at claim) the rescuer follow it.
func IdempotentKind(kind string) bool {
	switch kind {
	case "http", "resend", "log":
		return true
	}
	return false
}
