package attachment

import (
	"github.com/sendonce/sendonce/api"

	"github.com/sendonce/sendonce/internal/optional"
)

// ToAPI describes stored files in the wire types of api/; nil (a listing) leaves
// the field out.
func ToAPI(in []Info) *[]api.Attachment {
	if in == nil {
		return nil
	}
	out := make([]api.Attachment, len(in))
	for i, a := range in {
		out[i] = api.Attachment{Filename: a.Filename, ContentType: a.ContentType, ContentId: a.ContentID, Size: a.Size, Sha256: a.SHA256}
	}
	return &out
}

// FromAPI is the files of a request; nil when the field is absent.
func FromAPI(in *[]api.AttachmentCreate) *[]Input {
	if in == nil {
		return nil
	}
	out := make([]Input, len(*in))
	for i, a := range *in {
		out[i] = Input{Filename: a.Filename, Content: a.Content, ContentType: optional.Value(a.ContentType), ContentID: optional.Value(a.ContentId)}
	}
	return &out
}
