package provider

import (
	"fmt"
	netmail "net/mail"

	"github.com/wneessen/go-mail"
)

// MIME builds the go-mail message for m: From with display name, one To,
// Reply-To, the deterministic Message-ID, m.Headers (List-Unsubscribe and
// List-Unsubscribe-Post among them) and a multipart/alternative body with the
// text part first, since clients show the last alternative they can render.
func MIME(m Message) (*mail.Msg, error) {
	if m.From == "" || m.To == "" {
		return nil, fmt.Errorf("message %s: from and to are required", m.JobID)
	}
	msg := mail.NewMsg(mail.WithNoDefaultUserAgent())
	// The *MailAddress setters take the validated address as is; the *Format
	// setters would build and re-parse a string and choke on quotes in names.
	msg.FromMailAddress(&netmail.Address{Name: m.FromName, Address: m.From})
	msg.ToMailAddress(&netmail.Address{Name: m.ToName, Address: m.To})
	if m.ReplyTo != "" {
		msg.ReplyToMailAddress(&netmail.Address{Address: m.ReplyTo})
	}
	msg.Subject(m.Subject)
	if m.MessageID != "" {
		msg.SetMessageIDWithValue(m.MessageID)
	}
	msg.SetDate()
	for _, h := range m.Headers {
		msg.SetGenHeader(mail.Header(h.Name), h.Value)
	}
	switch {
	case m.Text != "" && m.HTML != "":
		msg.SetBodyString(mail.TypeTextPlain, m.Text)
		msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)
	case m.HTML != "":
		msg.SetBodyString(mail.TypeTextHTML, m.HTML)
	default:
		msg.SetBodyString(mail.TypeTextPlain, m.Text)
	}
	return msg, nil
}
