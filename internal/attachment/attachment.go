// Package attachment checks and stores the files messages and campaigns carry.
// A file is stored once per account, addressed by the SHA-256 of its bytes, and
// referenced by each message or campaign that carries it (migration 00280);
// maintenance deletes a file nothing references any more.
package attachment

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"mime"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/text"
)

// Limits, after Postmark's: a message is at most 10 MB with its attachments;
// we count the decoded bytes of the files against it.
const (
	// MaxTotalBytes is the most the decoded files of one message (or campaign) may weigh.
	MaxTotalBytes = 10 << 20
	// MaxCount is the most files one message (or campaign) may carry.
	MaxCount = 20
	// MaxFilenameBytes bounds a file name.
	MaxFilenameBytes = 255
	// MaxContentIDBytes bounds a content id.
	MaxContentIDBytes = 255
	// MaxContentTypeBytes bounds a content type.
	MaxContentTypeBytes = 255
)

// Input is one file as the API takes it (Resend's fields): content in base64.
type Input struct {
	Filename    string
	Content     string
	ContentType string
	ContentID   string
}

// Check validates files and decodes them. pointer is the JSON pointer of the
// list (/attachments); errors name the field of the file at fault
// (/attachments/2/filename). A content type left out is guessed from the file
// name's extension, else application/octet-stream. Too many decoded bytes in all
// is a 413 (apperr.TooLarge) naming /attachments.
func Check(in []Input, pointer string) ([]provider.Attachment, error) {
	if len(in) > MaxCount {
		return nil, apperr.Invalidf(pointer, "at most %d attachments", MaxCount)
	}
	out := make([]provider.Attachment, 0, len(in))
	total := 0
	cids := map[string]int{}
	for i, a := range in {
		at := pointer + "/" + strconv.Itoa(i)
		if err := checkFilename(a.Filename); err != nil {
			return nil, apperr.Invalidf(at+"/filename", "%s", err.Error())
		}
		// Decoded size first, from the encoded length, so a file far too large is
		// refused before it is decoded.
		if total+base64.StdEncoding.DecodedLen(len(a.Content))-2 > MaxTotalBytes {
			return nil, tooLarge(pointer)
		}
		content, err := base64.StdEncoding.DecodeString(a.Content)
		if err != nil {
			return nil, apperr.Invalidf(at+"/content", "content must be standard base64 (RFC 4648 §4, padded, no line breaks)")
		}
		total += len(content)
		if total > MaxTotalBytes {
			return nil, tooLarge(pointer)
		}
		ct, err := checkContentType(a.ContentType, a.Filename)
		if err != nil {
			return nil, apperr.Invalidf(at+"/content_type", "%s", err.Error())
		}
		if a.ContentID != "" {
			if !validContentID(a.ContentID) {
				return nil, apperr.Invalidf(at+"/content_id",
					"content_id must be 1 to %d of A-Z a-z 0-9 and !#$%%&'*+-/=?^_`{|}~.@ (no angle brackets; the HTML names it as cid:<content_id>)",
					MaxContentIDBytes)
			}
			if j, dup := cids[strings.ToLower(a.ContentID)]; dup {
				return nil, apperr.Invalidf(at+"/content_id", "content_id is already that of attachment %d", j)
			}
			cids[strings.ToLower(a.ContentID)] = i
		}
		out = append(out, provider.Attachment{Filename: a.Filename, ContentType: ct, ContentID: a.ContentID, Content: content})
	}
	return out, nil
}

func tooLarge(pointer string) error {
	e := apperr.New(apperr.TooLarge, "attachments may weigh at most %d bytes in all (decoded)", MaxTotalBytes)
	e.Fields = []apperr.FieldError{{Pointer: pointer, Detail: e.Message}}
	return e
}

type errText string

func (e errText) Error() string { return string(e) }

// checkFilename refuses a name that is empty, too long, not UTF-8, holds a
// control character (line breaks would split a MIME header), a bidirectional
// formatting character (text.IsBidiControl: it disguises the extension), a path separator
// (a client might save the file elsewhere than its download folder) or is "."/"..".
func checkFilename(name string) error {
	switch {
	case name == "" || len(name) > MaxFilenameBytes:
		return errText("filename must be 1 to 255 bytes")
	case !utf8.ValidString(name):
		return errText("filename must be valid UTF-8")
	case strings.ContainsAny(name, `/\`):
		return errText("filename must not contain a path separator (/ or \\)")
	case name == "." || name == ".." || strings.TrimSpace(name) == "":
		return errText("filename must name a file")
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == '\ufeff' ||
			text.IsBidiControl(r) {
			return errText("filename must not contain control or bidirectional formatting characters")
		}
	}
	return nil
}

// checkContentType returns the type to send: the one given, when it is a
// type/subtype mime.ParseMediaType reads, or one guessed from the name.
func checkContentType(ct, filename string) (string, error) {
	if ct == "" {
		if t := mime.TypeByExtension(strings.ToLower(path.Ext(filename))); t != "" {
			return t, nil
		}
		return "application/octet-stream", nil
	}
	if len(ct) > MaxContentTypeBytes {
		return "", errText("content_type must be at most 255 bytes")
	}
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] > 0x7e {
			return "", errText("content_type must be printable ASCII")
		}
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return "", errText("content_type must be a MIME type such as application/pdf")
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" || strings.HasPrefix(typ, "multipart") || typ == "message" {
		return "", errText("content_type must be a MIME type such as application/pdf (not multipart/* or message/*)")
	}
	delete(params, "name")
	return mime.FormatMediaType(mt, params), nil
}

// validContentID: the dot-atom characters of RFC 5322 and '@', which every
// provider and mail client takes in a Content-ID and a cid: URL.
func validContentID(s string) bool {
	if s == "" || len(s) > MaxContentIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-/=?^_`{|}~.@", c) >= 0) {
			return false
		}
	}
	return true
}

// Store stores each file once in the account (or marks the stored one used)
// and calls ref to add the caller's reference to it, in order; q is the
// caller's transaction, so files and references commit together.
func Store(ctx context.Context, q *store.Queries, accountID int64, files []provider.Attachment,
	ref func(position int32, a provider.Attachment, sum []byte) error) error {
	for i, a := range files {
		sum := sha256.Sum256(a.Content)
		if err := q.AttachmentBlobPut(ctx, store.AttachmentBlobPutParams{AccountID: accountID, Sha256: sum[:],
			Size: int32(len(a.Content)), Content: a.Content}); err != nil {
			return err
		}
		if err := ref(int32(i), a, sum[:]); err != nil {
			return err
		}
	}
	return nil
}

// Info describes a stored file of a message or campaign (not its bytes).
type Info struct {
	Filename, ContentType, ContentID string
	Size                             int
	// SHA256 is the file's digest in hex: the file is stored once per account.
	SHA256 string
}

// Describe returns the files of a campaign of the account, in order.
func Describe(ctx context.Context, q *store.Queries, accountID, campaignID int64) ([]Info, error) {
	rows, err := q.CampaignAttachmentMeta(ctx, store.CampaignAttachmentMetaParams{AccountID: accountID, CampaignID: campaignID})
	if err != nil {
		return nil, err
	}
	out := make([]Info, len(rows))
	for i, a := range rows {
		out[i] = Info{Filename: a.Filename, ContentType: a.ContentType, ContentID: a.ContentID, Size: int(a.Size),
			SHA256: hex.EncodeToString(a.Sha256)}
	}
	return out, nil
}

// LoadCampaign returns the files of a campaign with their bytes, in order: the
// executor loads them once per campaign and every recipient's message shares them.
func LoadCampaign(ctx context.Context, q *store.Queries, accountID, campaignID int64) ([]provider.Attachment, error) {
	rows, err := q.CampaignAttachmentList(ctx, store.CampaignAttachmentListParams{AccountID: accountID, CampaignID: campaignID})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	out := make([]provider.Attachment, len(rows))
	for i, r := range rows {
		out[i] = provider.Attachment{Filename: r.Filename, ContentType: r.ContentType, ContentID: r.ContentID, Content: r.Content, SHA256: r.Sha256}
	}
	return out, nil
}

// DescribeTemplate returns the files of a template of the account, in order.
func DescribeTemplate(ctx context.Context, q *store.Queries, accountID, templateID int64) ([]Info, error) {
	rows, err := q.TemplateAttachmentMeta(ctx, store.TemplateAttachmentMetaParams{AccountID: accountID, TemplateID: templateID})
	if err != nil {
		return nil, err
	}
	out := make([]Info, len(rows))
	for i, a := range rows {
		out[i] = Info{Filename: a.Filename, ContentType: a.ContentType, ContentID: a.ContentID, Size: int(a.Size),
			SHA256: hex.EncodeToString(a.Sha256)}
	}
	return out, nil
}
