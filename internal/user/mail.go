package user

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"time"

	"github.com/sendonce/sendonce/internal/provider"
)

// system builds one message of the service's own mail. Its job id,
// `system:<account>:<kind>:<n>`, names the account whose dev inbox shows it.
func (s *Service) system(accountID int64, kind, to, subject, text, link string) provider.Message {
	host := "sendonce.invalid"
	if u, err := url.Parse(s.opts.PublicURL); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	from := s.opts.From
	if from == "" {
		from = "no-reply@" + host
	}
	nonce := randomHex(12)
	return provider.Message{
		JobID:     fmt.Sprintf("system:%d:%s:%s", accountID, kind, nonce),
		MessageID: nonce + "@" + host,
		From:      from, FromName: s.opts.FromName, To: to,
		Subject: subject,
		Text:    text + "\n\n" + link + "\n",
		HTML: "<p>" + html.EscapeString(text) + "</p><p><a href=\"" + html.EscapeString(link) + "\">" +
			html.EscapeString(link) + "</a></p>",
	}
}

func (s *Service) invitationMail(accountID, id int64, to, accountName, role, link string) provider.Message {
	m := s.system(accountID, "invitation", to, "You are invited to "+accountName+" on sendonce",
		fmt.Sprintf("You are invited to join %s on sendonce as %s. The link works once, within %s.",
			accountName, role, InvitationTTL), link)
	m.JobID = s.invitationJob(accountID, id)
	return m
}

// mailLater sends m in the background: the answer to "mail me a link" must not
// wait for (and so reveal, by its timing) a send that happens only for known
// addresses. A failure is logged.
func (s *Service) mailLater(ctx context.Context, m provider.Message) {
	ctx = context.WithoutCancel(ctx)
	select {
	case s.mailing <- struct{}{}:
	default:
		s.opts.Logger.WarnContext(ctx, "system mail dropped: too many in flight", "job_id", m.JobID)
		return
	}
	go func() {
		defer func() { <-s.mailing }()
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if _, err := s.mail.Send(ctx, m); err != nil {
			s.opts.Logger.WarnContext(ctx, "system mail failed", "job_id", m.JobID, "err", err)
		}
	}()
}

// Idle waits until no background mail is being sent (tests, shutdown).
func (s *Service) Idle(ctx context.Context) error {
	for {
		if len(s.mailing) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
