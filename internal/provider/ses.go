package provider

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"github.com/sendonce/sendonce/internal/egress"
)

// SESSettings configure the Amazon SES (v2) adapter.
type SESSettings struct {
	Region          string
	AccessKeyID     string
	SecretAccessKey string
	// ConfigurationSet names the SES configuration set (event destinations); optional.
	ConfigurationSet string
	// BaseURL replaces the regional endpoint (tests, VPC endpoints).
	BaseURL   string
	Timeout   time.Duration
	Transport http.RoundTripper
	// Guard says where connections may go (the endpoint override included); nil
	// (tests): any address.
	Guard *egress.Guard
}

// SES sends through Amazon SES v2 SendEmail with the AWS SDK (SigV4). The SDK's
// retryer is off: it would repeat a SendEmail answered 500 or 429 up to three
// times, and SES has no idempotency token, so each repeat could be a duplicate.
// Idempotent is false and the campaign's ambiguous_policy decides. Our job id
// travels as the message tag job_id (with `:` as `_`), echoed in the events of a
// configuration set (tag values hold at most 256 characters: a longer job id
// travels as fitKey derives it). SES replaces any Message-ID we give, so none is
// sent. Header values must be printable ASCII: others are sent RFC 2047-encoded.
//
// Classification (the API error code):
//
//	TooManyRequestsException, LimitExceededException, ThrottlingException,
//	ServiceUnavailable and any 503 (nothing was taken)                     → Temporary
//	InternalServiceErrorException and unknown server faults               → Ambiguous
//	AccountSuspendedException, SendingPausedException,
//	MailFromDomainNotVerifiedException, 401/403 signatures                 → Temporary, Config
//	MessageRejected, BadRequestException, NotFoundException, other 4xx     → Permanent
type SES struct {
	cli *sesv2.Client
	cs  string
}

// NewSES returns an SES adapter.
func NewSES(s SESSettings) (*SES, error) {
	if s.Region == "" {
		return nil, errors.New("ses: region is required")
	}
	if s.Timeout <= 0 {
		s.Timeout = 30 * time.Second
	}
	g := guardOf(s.Guard)
	tr := s.Transport
	if tr == nil {
		tr = transportOf(s.Guard)
	}
	cfg := aws.Config{Region: s.Region,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKeyID, s.SecretAccessKey, ""),
		// The guard's client: its dialer checks the endpoint's address, and it
		// follows no redirect (a 3xx comes back as an error).
		HTTPClient: g.Client(tr, s.Timeout),
		Retryer:    func() aws.Retryer { return aws.NopRetryer{} },
	}
	cli := sesv2.NewFromConfig(cfg, func(o *sesv2.Options) {
		o.Retryer = aws.NopRetryer{}
		if s.BaseURL != "" {
			o.BaseEndpoint = aws.String(s.BaseURL)
		}
	})
	return &SES{cli: cli, cs: s.ConfigurationSet}, nil
}

// Send calls SendEmail and returns SES's MessageId.
func (p *SES) Send(ctx context.Context, m Message) (string, error) {
	msg := &types.Message{
		Subject: &types.Content{Data: aws.String(m.Subject), Charset: aws.String("UTF-8")},
		Body:    &types.Body{},
	}
	if m.Text != "" {
		msg.Body.Text = &types.Content{Data: aws.String(m.Text), Charset: aws.String("UTF-8")}
	}
	if m.HTML != "" {
		msg.Body.Html = &types.Content{Data: aws.String(m.HTML), Charset: aws.String("UTF-8")}
	}
	for _, h := range m.Headers {
		v := sesHeaderValue(h.Value)
		if len(v) > sesHeaderMax {
			return "", classed(Permanent, 0, fmt.Errorf("ses: header %s is longer than the %d characters SES accepts", h.Name, sesHeaderMax))
		}
		msg.Headers = append(msg.Headers, types.MessageHeader{Name: aws.String(h.Name), Value: aws.String(v)})
	}
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(fromHeader(m.FromName, m.From)),
		Destination: &types.Destination{ToAddresses: []string{fromHeader(m.ToName, m.To)},
			CcAddresses: m.Cc, BccAddresses: m.Bcc},
		Content:          &types.EmailContent{Simple: msg},
		EmailTags:        []types.MessageTag{{Name: aws.String("job_id"), Value: aws.String(fitKey(m.JobID, 256, tagSafe))}},
		ReplyToAddresses: m.ReplyToAll(),
	}
	if len(m.Attachments) > 0 {
		// The message goes as raw MIME, the bytes the SMTP provider sends (whose
		// structure tests parse back: inline parts in multipart/related, names
		// RFC 2231-encoded), rather than Simple content's own attachment list.
		// SES replaces the Message-ID as it always does. Destination stays: it is
		// the envelope, Bcc included.
		raw, err := AppendMIME(nil, m)
		if err != nil {
			return "", classed(Permanent, 0, err)
		}
		in.Content = &types.EmailContent{Raw: &types.RawMessage{Data: raw}}
		in.ReplyToAddresses = nil // in the MIME headers
	}
	if p.cs != "" {
		in.ConfigurationSetName = aws.String(p.cs)
	}
	out, err := p.cli.SendEmail(ctx, in)
	if err != nil {
		if egress.Refused(err) {
			return "", refusedError()
		}
		return "", classifySES(err)
	}
	if out.MessageId != nil && *out.MessageId != "" {
		return *out.MessageId, nil
	}
	return m.JobID, nil
}

// classifySES maps an SDK error to a class (table on SES).
func classifySES(err error) *Error {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return classed(Temporary, 0, err)
		}
		// Nothing proves the request did not reach SES.
		return classed(Ambiguous, 0, err)
	}
	code := 0
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		code = re.HTTPStatusCode()
	}
	e := &Error{Code: code, Err: fmt.Errorf("ses: %s: %s", ae.ErrorCode(), ae.ErrorMessage())}
	switch ae.ErrorCode() {
	case "TooManyRequestsException", "LimitExceededException", "ThrottlingException",
		"ServiceUnavailable", "ServiceUnavailableException":
		e.Class = Temporary
	case "AccountSuspendedException", "SendingPausedException", "MailFromDomainNotVerifiedException":
		e.Class, e.Config = Temporary, true
	case "InternalServiceErrorException":
		e.Class = Ambiguous
	case "MessageRejected", "BadRequestException", "NotFoundException":
		e.Class = Permanent
	default:
		switch {
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			e.Class, e.Config = Temporary, true
		case code == http.StatusServiceUnavailable:
			e.Class = Temporary
		case ae.ErrorFault() == smithy.FaultServer || code >= 500:
			e.Class = Ambiguous
		default:
			e.Class = Permanent
		}
	}
	return e
}

// sesHeaderMax is the longest header value SES accepts.
const sesHeaderMax = 870

// sesHeaderValue returns v as SES accepts it, printable ASCII: unchanged when it
// is, else RFC 2047-encoded (Q encoding, or B where shorter), which mail readers
// decode back to the original.
func sesHeaderValue(v string) string {
	ascii := true
	for i := 0; i < len(v) && ascii; i++ {
		ascii = v[i] >= 0x20 && v[i] <= 0x7e
	}
	if ascii {
		return v
	}
	q, b := mime.QEncoding.Encode("utf-8", v), mime.BEncoding.Encode("utf-8", v)
	if len(b) < len(q) {
		return b
	}
	return q
}

// Verify calls GetAccount, which sends nothing, and requires sending to be enabled.
func (p *SES) Verify(ctx context.Context) error {
	out, err := p.cli.GetAccount(ctx, &sesv2.GetAccountInput{})
	if err != nil {
		if egress.Refused(err) {
			return verifyErr("connect", errRefused)
		}
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return verifyErr("auth", fmt.Errorf("ses: %s: %s", ae.ErrorCode(), ae.ErrorMessage()))
		}
		return verifyErr("connect", err)
	}
	if !out.SendingEnabled {
		return verifyErr("account", errors.New("ses: sending is disabled for this account"))
	}
	return nil
}

// Idempotent is false: SendEmail has no idempotency token.
func (p *SES) Idempotent() bool { return IdempotentKind("ses") }

// Close does nothing: the SDK client holds no resources beyond idle connections.
func (p *SES) Close() error { return nil }
