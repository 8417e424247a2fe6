// Package provider sends one rendered message through an email provider: SMTP
// (go-mail dials; the transaction and the MIME bytes are this package's), an
// HTTP endpoint that honours Idempotency-Key, or the log (development).
//
// The executor consumes providers through its own small interface (Send and
// Idempotent); this package defines the Message they carry and the error classes
// that decide what the executor does next.
package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Provider sends messages. Every implementation is safe for concurrent use.
type Provider interface {
	// Send hands one message to the provider and returns the provider's id for it
	// (the job id when the provider gives none). A failure is an *Error whose Class
	// says whether to retry.
	//
	// m's HTML and Text may be the bytes of a buffer its caller reuses for the
	// next message once Send returns (the executor's campaign sends,
	// render.BuildInto): Send reads them only until it returns, and anything that
	// keeps m, or a part of its HTML or Text, after that keeps m.Clone().
	Send(ctx context.Context, m Message) (providerMessageID string, err error)
	// Idempotent reports whether sending the same JobID twice delivers once, so an
	// ambiguous or interrupted send may be repeated.
	Idempotent() bool
	// Close releases connections; Send must not be called after it.
	Close() error
}

// Message is one rendered email to one recipient.
type Message struct {
	// JobID is the deterministic `campaign:<campaign>:<subscriber>` key: the
	// idempotency key handed to the provider and the seed of MessageID.
	JobID string
	// MessageID is the RFC 5322 Message-ID, without angle brackets, derived from JobID.
	MessageID string
	From      string // bare address
	FromName  string
	ReplyTo   string // bare address or ""
	To        string // bare address
	ToName    string
	Subject   string
	// HTML and Text may be a reused buffer's bytes, valid only until Send
	// returns (Provider.Send).
	HTML string
	Text string
	// ReturnPath is the envelope sender (SMTP MAIL FROM, where bounces go) when
	// it is not From: a VERP address naming the send (internal/bounce).
	ReturnPath string
	// SendID is the send row the message is for (0 when none: a test send, a
	// system mail), so a provider wrapper can name it in ReturnPath.
	SendID int64
	// Headers are extra headers, in order; List-Unsubscribe and
	// List-Unsubscribe-Post are among them for campaign messages.
	Headers []Header
	// MoreReplyTo are further Reply-To addresses after ReplyTo (bare addresses).
	MoreReplyTo []string
	// Cc are copy recipients, written in the Cc header and added to the envelope.
	Cc []string
	// Bcc are blind copy recipients: in the envelope (or the provider's
	// recipient list), never in a header.
	Bcc []string
	// Attachments are files carried with the message, in order. A campaign's are
	// shared by every recipient's Message: providers must not modify them.
	Attachments []Attachment
}

// Clone returns m with its own copy of HTML and Text, which a Message handed to
// Send may borrow from its caller's buffer only until Send returns.
func (m Message) Clone() Message {
	m.HTML, m.Text = strings.Clone(m.HTML), strings.Clone(m.Text)
	return m
}

// ReplyToAll returns ReplyTo and MoreReplyTo as one list (nil when none).
func (m Message) ReplyToAll() []string {
	if m.ReplyTo == "" {
		return m.MoreReplyTo
	}
	return append([]string{m.ReplyTo}, m.MoreReplyTo...)
}

// Attachment is one file of a message.
type Attachment struct {
	// Filename is the name the recipient sees: valid UTF-8, no path separators.
	Filename string
	// ContentType is a MIME type such as application/pdf.
	ContentType string
	// ContentID, when set, makes the attachment inline: the HTML refers to it as
	// cid:<ContentID>. It holds no angle brackets.
	ContentID string
	// Content is the file's bytes (decoded).
	Content []byte
	// SHA256 is the SHA-256 of Content when the store gave it (nil otherwise): it
	// keys the cache that encodes a campaign's files once.
	SHA256 []byte
	// Encoded, when set, is Content already in base64 (EncodeAttachment), shared
	// by every message that carries the file; providers copy it instead of
	// encoding the bytes again for each recipient.
	Encoded *Encoded
}

// Inline reports whether a is shown within the HTML (it has a Content-ID).
func (a Attachment) Inline() bool { return a.ContentID != "" }

// Header is one extra message header.
type Header struct {
	Name, Value string
}

// Class says what a failed send means for the recipient.
type Class int

const (
	// Temporary means the provider refused for now (4xx, throttling, connection refused
	// before the message was handed over). Retry later with the same job id.
	Temporary Class = iota + 1
	// Permanent means the provider will never accept this message (5xx, invalid address).
	// Do not retry.
	Permanent
	// Ambiguous means the message may or may not have been accepted (connection lost
	// after DATA, timeout after the request was sent). Only an idempotent provider
	// can safely be asked again.
	Ambiguous
)

func (c Class) String() string {
	switch c {
	case Temporary:
		return "temporary"
	case Permanent:
		return "permanent"
	case Ambiguous:
		return "ambiguous"
	}
	return "unknown"
}

// Error is a classified send failure.
type Error struct {
	Class Class
	// Code is the provider's status (SMTP reply code or HTTP status), 0 if none.
	Code int
	Err  error
	// RetryAfter is how long the provider asked us to wait (rate limits, quotas);
	// 0 when it did not say.
	RetryAfter time.Duration
	// Config marks a failure of the sender's own credentials or setup (401/403, a
	// suspended account, an unverified sender), not of this message: the executor
	// counts these per sender and pauses its campaigns after several in a row.
	Config bool
	// Suppress marks a recipient the provider itself refuses for good (Postmark's
	// inactive recipient): the address should be suppressed, not only failed.
	Suppress bool
	// RouteDown marks a refusal of the route itself before any message was handed
	// over: the connection refused or broken before the message, TLS or AUTH
	// failed, the relay closing (421) or refusing the envelope sender (MAIL FROM
	// 4xx/5xx). Not a verdict on the recipient (a refused RCPT is not one): a
	// sender pool moves the row to its next sender, which cannot make a copy.
	// Never set on an Ambiguous failure.
	RouteDown bool
}

func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("%s failure (%d): %v", e.Class, e.Code, e.Err)
	}
	return fmt.Sprintf("%s failure: %v", e.Class, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// errClosed is returned by providers used after Close.
var errClosed = errors.New("provider closed")

// classed wraps err in an *Error of the given class.
func classed(c Class, code int, err error) *Error {
	return &Error{Class: c, Code: code, Err: err}
}

// ClassOf returns the class of a send error. Errors that are not an *Error are
// ambiguous: nothing proves the message was not handed over.
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return Ambiguous
}

// AsError returns err's *Error, if it has one.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
