package provider

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/wneessen/go-mail/smtp"

	"github.com/sendonce/sendonce/internal/egress"
)

// Verify checks the SMTP settings step by step without sending: connect (and the
// greeting), EHLO, STARTTLS (security starttls, required) or implicit TLS, and AUTH
// when a username is set, then QUIT. The error is a *VerifyError naming the step.
// The connection goes through the settings' guard: an internal address is refused
// before connecting, with "destination not allowed" whatever listens there, so
// verify cannot be used to tell an internal host's open ports from closed ones.
func (p *SMTP) Verify(ctx context.Context) error { return verifySMTP(ctx, p.settings) }

func verifySMTP(ctx context.Context, s SMTPSettings) error {
	if s.Timeout <= 0 {
		s.Timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	tlsCfg := s.TLSConfig
	if tlsCfg == nil {
		tlsCfg = &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	}
	conn, err := guardOf(s.Guard).Dialer(s.Timeout).DialContext(ctx, "tcp", addr)
	if err != nil {
		if egress.Refused(err) {
			return verifyErr("connect", errRefused)
		}
		return verifyErr("connect", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if s.Security == "tls" {
		tc := tls.Client(conn, tlsCfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return verifyErr("tls", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.Host)
	if err != nil {
		conn.Close()
		return verifyErr("connect", err)
	}
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		return verifyErr("connect", err)
	}
	if s.Security == "starttls" || s.Security == "" {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return verifyErr("starttls", errors.New("the server does not offer STARTTLS"))
		}
		if err := c.StartTLS(tlsCfg); err != nil {
			return verifyErr("starttls", err)
		}
	}
	if s.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return verifyErr("auth", errors.New("the server does not offer AUTH"))
		}
		// PLAIN refuses to send the password over an unencrypted connection
		// unless the server is local.
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, s.Host, false)); err != nil {
			return verifyErr("auth", err)
		}
	}
	_ = c.Quit()
	return nil
}

// Verify answers that an HTTP endpoint has no call that checks credentials
// without sending.
func (p *HTTP) Verify(context.Context) error { return verifyErr("request", errNoVerify) }
