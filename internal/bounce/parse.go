package bounce

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strings"
)

// Kind is what a mailbox message is taken for.
type Kind string

// The kinds of mailbox message.
const (
	KindHardBounce Kind = "hard_bounce"
	KindSoftBounce Kind = "soft_bounce"
	KindComplaint  Kind = "complaint"
	KindAutoReply  Kind = "auto_reply"
	KindOther      Kind = "other"
)

// Report is what a mailbox message says, before it is tied to a send.
type Report struct {
	Kind Kind
	// Status is the DSN's status code (5.1.1) or the complaint's feedback type.
	Status string
	// Addresses are where the token may be: the addresses the report was
	// delivered to (the Return-Path it went back to) and the envelope sender the
	// report names (X-Postfix-Sender, Original-Mail-From, the returned
	// message's Return-Path). Only a verifying token counts.
	Addresses []string
	// Key is the SHA-256 of the message's bytes, in hex.
	Key string
}

// maxPart bounds what is read of one MIME part; a report's parts are small.
const maxPart = 256 << 10

// Parse reads a mailbox message. A message that is neither a report nor an
// auto-reply is KindOther; a message that cannot be read at all is an error.
func Parse(raw []byte) (Report, error) {
	sum := sha256.Sum256(raw)
	r := Report{Kind: KindOther, Key: hex.EncodeToString(sum[:])}
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return r, err
	}
	for _, h := range []string{"X-Original-To", "Delivered-To", "Envelope-To", "To"} {
		for _, v := range msg.Header[textproto.CanonicalMIMEHeaderKey(h)] {
			r.Addresses = append(r.Addresses, addresses(v)...)
		}
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err == nil && mt == "multipart/report" && params["boundary"] != "" {
		if err := r.readReport(msg.Body, params["boundary"], strings.ToLower(params["report-type"])); err != nil {
			return r, err
		}
		return r, nil
	}
	// RFC 3834 §5: any value but "no" marks an automatic message; a vacation
	// notice is never a bounce, whatever its words say.
	if as := strings.ToLower(strings.TrimSpace(msg.Header.Get("Auto-Submitted"))); as != "" && as != "no" {
		r.Kind = KindAutoReply
	}
	return r, nil
}

// readReport reads the parts of a multipart/report (RFC 6522): the machine
// readable part says what happened, the returned message or its headers say
// which envelope sender it was sent with.
func (r *Report) readReport(body io.Reader, boundary, reportType string) error {
	mr := multipart.NewReader(body, boundary)
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		if err != nil {
			return err
		}
		mt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		data, err := io.ReadAll(io.LimitReader(decoded(p), maxPart))
		// A report cut short (no closing boundary, as some feedback loops send
		// them) is read as far as it goes.
		truncated := errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !truncated {
			return err
		}
		switch mt {
		case "message/delivery-status", "message/global-delivery-status":
			if reportType == "delivery-status" || reportType == "global-delivery-status" {
				r.readDeliveryStatus(data)
			}
		case "message/feedback-report":
			if reportType == "feedback-report" {
				r.readFeedback(data)
			}
		case "message/rfc822", "text/rfc822-headers", "message/global", "message/global-headers":
			if h, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(data))).ReadMIMEHeader(); err == nil || len(h) > 0 {
				for _, v := range h.Values("Return-Path") {
					r.Addresses = append(r.Addresses, addresses(v)...)
				}
			}
		}
		if truncated {
			return nil
		}
	}
}

// readDeliveryStatus reads a DSN's fields (RFC 3464 §2): the per-message block,
// then one block per recipient. We send one recipient per message, so the first
// recipient that failed or was delayed decides: a 5.x.x status is permanent, a
// 4.x.x one transient (RFC 3463 §3.1); delivered, relayed and expanded change
// nothing.
func (r *Report) readDeliveryStatus(data []byte) {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(data)))
	first := true
	for {
		h, err := tp.ReadMIMEHeader()
		if len(h) > 0 {
			if first {
				for _, v := range h.Values("X-Postfix-Sender") {
					r.Addresses = append(r.Addresses, fieldAddress(v))
				}
			}
			first = false
			action := strings.ToLower(strings.TrimSpace(h.Get("Action")))
			status := strings.TrimSpace(h.Get("Status"))
			if r.Kind == KindOther && (action == "failed" || action == "delayed") {
				r.Status = status
				switch {
				case action == "delayed" || strings.HasPrefix(status, "4."):
					r.Kind = KindSoftBounce
				case strings.HasPrefix(status, "5."):
					r.Kind = KindHardBounce
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// readFeedback reads a complaint report's fields (RFC 5965 §3.1): every
// feedback type is a complaint about the message; Original-Mail-From is the
// envelope sender it came with.
func (r *Report) readFeedback(data []byte) {
	h, _ := textproto.NewReader(bufio.NewReader(bytes.NewReader(data))).ReadMIMEHeader()
	if ft := strings.TrimSpace(h.Get("Feedback-Type")); ft != "" {
		r.Kind, r.Status = KindComplaint, strings.ToLower(ft)
	}
	for _, v := range h.Values("Original-Mail-From") {
		r.Addresses = append(r.Addresses, fieldAddress(v))
	}
}

// decoded undoes a part's base64 transfer encoding (quoted-printable does not
// occur in the machine-readable parts; 7bit and 8bit need nothing).
func decoded(p *multipart.Part) io.Reader {
	if strings.EqualFold(strings.TrimSpace(p.Header.Get("Content-Transfer-Encoding")), "base64") {
		return base64.NewDecoder(base64.StdEncoding, p)
	}
	return p
}

// fieldAddress reads a DSN address field ("rfc822; a@b") or a bare address.
func fieldAddress(v string) string {
	if t, a, ok := strings.Cut(v, ";"); ok && !strings.Contains(t, "@") {
		v = a
	}
	return strings.Trim(strings.TrimSpace(v), "<>")
}

// addresses reads the addresses of a header value, leniently: a value that is
// not an address list is taken as one address.
func addresses(v string) []string {
	list, err := mail.ParseAddressList(v)
	if err != nil {
		return []string{fieldAddress(v)}
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, a.Address)
	}
	return out
}
