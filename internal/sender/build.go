package sender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// Provider is a sender's built provider: what sends, and what can check its
// credentials without sending.
type Provider interface {
	provider.Provider
	Verify(ctx context.Context) error
}

// Timeout bounds one provider request or SMTP command of a sender.
const Timeout = 30 * time.Second

// build makes the provider a sender describes; every connection it makes goes
// through g.
// signer, when not nil, signs smtp messages with DKIM unless the settings opt out.
func build(typ string, st Settings, c Credentials, conns int, g egress.Guard, noChunking bool, signer provider.Signer) (Provider, error) {
	guard := &g
	native := provider.NativeSettings{BaseURL: st.Endpoint, Timeout: Timeout, Guard: guard}
	switch typ {
	case "smtp":
		if conns < 1 {
			conns = 4
		}
		sec := st.Security
		if sec == "" {
			sec = "starttls"
		}
		if st.DKIMSign != nil && !*st.DKIMSign {
			signer = nil
		}
		return provider.NewSMTP(provider.SMTPSettings{Host: st.Host, Port: st.Port, Username: st.Username,
			Password: c.Password, Security: sec, Conns: conns, Timeout: Timeout, Guard: guard, NoChunking: noChunking,
			Signer: signer})
	case "http":
		return provider.NewHTTP(provider.HTTPSettings{URL: st.URL, Authorization: c.Authorization, Timeout: Timeout, Guard: guard})
	case "resend":
		native.Key = c.APIKey
		return provider.NewResend(native)
	case "postmark":
		native.Key = c.ServerToken
		return provider.NewPostmark(native, st.MessageStream)
	case "sendgrid":
		native.Key = c.APIKey
		if native.BaseURL == "" && st.Region == "eu" {
			native.BaseURL = provider.SendGridEU
		}
		return provider.NewSendGrid(native)
	case "mailgun":
		native.Key = c.APIKey
		if native.BaseURL == "" && st.Region == "eu" {
			native.BaseURL = provider.MailgunEU
		}
		return provider.NewMailgun(native, st.Domain)
	case "ses":
		return provider.NewSES(provider.SESSettings{Region: st.Region, AccessKeyID: c.AccessKeyID,
			SecretAccessKey: c.SecretAccessKey, ConfigurationSet: st.ConfigurationSet, BaseURL: st.Endpoint, Timeout: Timeout,
			Guard: guard})
	}
	return nil, fmt.Errorf("unknown sender type %q", typ)
}

// Built returns the provider of a stored sender, credentials decrypted.
func (s *Service) Built(r store.Sender) (Provider, error) {
	c, err := s.open(r)
	if err != nil {
		return nil, err
	}
	var st Settings
	_ = json.Unmarshal(r.Settings, &st) // as stored: toSender redacts for display
	var signer provider.Signer
	if s.dkim != nil {
		signer = s.dkim.For(r.AccountID)
	}
	p, err := build(r.Type, st, c, int(r.MaxConnections), s.guard, s.noChunking, signer)
	if err != nil || r.Type != "smtp" || st.BounceDomain == "" || s.returnPath == nil {
		return p, err
	}
	return &verp{Provider: p, accountID: r.AccountID, domain: st.BounceDomain, returnPath: s.returnPath}, nil
}

// verp puts the Return-Path naming its send on each message that has one.
type verp struct {
	Provider
	accountID  int64
	domain     string
	returnPath ReturnPath
}

// Send sends m with its VERP Return-Path when m is a send's.
func (v *verp) Send(ctx context.Context, m provider.Message) (string, error) {
	if m.SendID != 0 && m.ReturnPath == "" {
		m.ReturnPath = v.returnPath(v.accountID, m.SendID, v.domain)
	}
	return v.Provider.Send(ctx, m)
}

// VerifyResult is the answer of a credentials check.
type VerifyResult struct {
	OK bool
	// Step is what failed: connect, tls, starttls, auth, request, account or
	// credentials (stored credentials that cannot be decrypted); empty when OK.
	Step    string
	Message string
}

// Verify checks a sender's credentials without sending (SMTP: connect, STARTTLS,
// AUTH; the APIs: an authenticated call that sends nothing) and says what failed.
func (s *Service) Verify(ctx context.Context, accountID, id int64) (VerifyResult, error) {
	row, err := store.New(s.pool).SenderGet(ctx, store.SenderGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return VerifyResult{}, postgres.Error(err, "sender")
	}
	p, err := s.Built(row)
	if err != nil {
		return VerifyResult{Step: "credentials", Message: err.Error()}, nil
	}
	defer p.Close()
	if err := p.Verify(ctx); err != nil {
		// The server's words come back short and sanitized, never a body as such.
		res := VerifyResult{Step: "request", Message: provider.Excerpt(err.Error())}
		var ve *provider.VerifyError
		if errors.As(err, &ve) {
			res.Step, res.Message = ve.Step, provider.Excerpt(ve.Err.Error())
		}
		return res, nil
	}
	return VerifyResult{OK: true, Message: "the provider accepted the credentials"}, nil
}
