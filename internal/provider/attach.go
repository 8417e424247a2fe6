package provider

import (
	"mime"
	"strings"
)

// A message with attachments is written as RFC 2046 and RFC 2387 describe, the
// structure mail clients expect (and go-mail writes):
//
//	multipart/mixed                  (only when there are regular attachments)
//	├── multipart/related            (only when there are inline attachments and HTML)
//	│   ├── the body (multipart/alternative, or the one text part)
//	│   └── each inline attachment   (Content-Disposition: inline, Content-ID: <id>)
//	└── each regular attachment      (Content-Disposition: attachment)
//
// Each level has its own random boundary. Attachments are base64 in lines of 76
// characters; names travel as RFC 2231 parameters (mime.FormatMediaType encodes
// a name that is not ASCII).

// base64Line is the longest line of a base64 body (RFC 2045 §6.8).
const base64Line = 76

// appendAttachments appends the content headers and body of a message that has
// attachments; boundary is the one the body's alternative uses.
func appendAttachments(dst []byte, m Message, boundary []byte) []byte {
	var inline, regular []Attachment
	for _, a := range m.Attachments {
		if a.Inline() && m.HTML != "" {
			inline = append(inline, a)
		} else {
			regular = append(regular, a)
		}
	}
	var mb, rb [2 * boundaryBytes]byte
	var mixed []byte
	if len(regular) > 0 {
		mixed = newBoundary(&mb)
		dst = append(dst, "Content-Type: multipart/mixed;\r\n boundary="...)
		dst = append(dst, mixed...)
		dst = append(dst, "\r\n\r\n--"...)
		dst = append(dst, mixed...)
		dst = append(dst, "\r\n"...)
	}
	if len(inline) > 0 {
		related := newBoundary(&rb)
		dst = append(dst, "Content-Type: multipart/related;\r\n boundary="...)
		dst = append(dst, related...)
		dst = append(dst, "\r\n\r\n--"...)
		dst = append(dst, related...)
		dst = append(dst, "\r\n"...)
		dst = appendBody(dst, m, boundary)
		for _, a := range inline {
			dst = append(dst, "\r\n--"...)
			dst = append(dst, related...)
			dst = append(dst, "\r\n"...)
			dst = appendAttachmentPart(dst, a, "inline")
		}
		dst = append(dst, "\r\n--"...)
		dst = append(dst, related...)
		dst = append(dst, "--\r\n"...)
	} else {
		dst = appendBody(dst, m, boundary)
	}
	if len(regular) > 0 {
		for _, a := range regular {
			dst = append(dst, "\r\n--"...)
			dst = append(dst, mixed...)
			dst = append(dst, "\r\n"...)
			dst = appendAttachmentPart(dst, a, "attachment")
		}
		dst = append(dst, "\r\n--"...)
		dst = append(dst, mixed...)
		dst = append(dst, "--\r\n"...)
	}
	return dst
}

// appendAttachmentPart appends one attachment's headers and base64 body.
func appendAttachmentPart(dst []byte, a Attachment, disposition string) []byte {
	dst = appendHeader(dst, "Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": a.Filename}))
	if disposition == "inline" {
		dst = appendHeader(dst, "Content-ID", "<"+a.ContentID+">")
	}
	dst = append(dst, "Content-Transfer-Encoding: base64\r\n"...)
	dst = appendHeader(dst, "Content-Type", attachmentType(a))
	dst = append(dst, "\r\n"...)
	return appendMIMEBase64(dst, a)
}

// attachmentType is a's Content-Type with its name parameter; a type that does
// not parse (the API refuses those, so only a caller of this package may pass
// one) is sent as application/octet-stream.
func attachmentType(a Attachment) string {
	mt, params, err := mime.ParseMediaType(a.ContentType)
	if err != nil || !strings.Contains(mt, "/") {
		mt, params = "application/octet-stream", map[string]string{}
	}
	params["name"] = a.Filename
	if v := mime.FormatMediaType(mt, params); v != "" {
		return v
	}
	return mime.FormatMediaType("application/octet-stream", map[string]string{"name": a.Filename})
}

// envelopeRecipients is every address the message goes to (To, Cc, Bcc), each
// once (compared without regard to case), To first.
func envelopeRecipients(m Message) []string {
	out := make([]string, 0, 1+len(m.Cc)+len(m.Bcc))
	seen := func(a string) bool {
		for _, x := range out {
			if strings.EqualFold(x, a) {
				return true
			}
		}
		return false
	}
	for _, list := range [][]string{{m.To}, m.Cc, m.Bcc} {
		for _, a := range list {
			if a != "" && !seen(a) {
				out = append(out, a)
			}
		}
	}
	return out
}

// attachmentContentType is a's content type, application/octet-stream when it
// has none.
func attachmentContentType(a Attachment) string {
	if a.ContentType == "" {
		return "application/octet-stream"
	}
	return a.ContentType
}
