package media

import (
	"context"
	"strings"

	"github.com/sendonce/sendonce/api"
)

// API is the Service in the wire types of api/, as the HTTP API calls it. An
// image's addresses are under PublicURL and the account's public id.
type API struct {
	*Service
	PublicURL string
}

// MaxBytes is the largest image an upload may carry.
func (API) MaxBytes() int { return MaxBytes }

// Upload stores an image (Service.Upload).
func (a API) Upload(ctx context.Context, accountID int64, publicID, name, declared string, body []byte) (api.Media, bool, error) {
	m, created, err := a.Service.Upload(ctx, accountID, name, declared, body)
	if err != nil {
		return api.Media{}, false, err
	}
	return a.toAPIMedia(m, publicID), created, nil
}

// List returns a page of the account's images (Service.List).
func (a API) List(ctx context.Context, accountID int64, publicID string, beforeID *int64, limit int) ([]api.Media, error) {
	rows, err := a.Service.List(ctx, accountID, beforeID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.Media, len(rows))
	for i, m := range rows {
		out[i] = a.toAPIMedia(m, publicID)
	}
	return out, nil
}

// Get returns one image (Service.Get).
func (a API) Get(ctx context.Context, accountID int64, publicID string, id int64) (api.Media, error) {
	m, err := a.Service.Get(ctx, accountID, id)
	if err != nil {
		return api.Media{}, err
	}
	return a.toAPIMedia(m, publicID), nil
}

func (a API) toAPIMedia(m Media, publicID string) api.Media {
	base := strings.TrimSuffix(a.PublicURL, "/")
	return api.Media{Id: m.ID, Name: m.Name, ContentType: api.MediaContentType(m.ContentType), Width: m.Width,
		Height: m.Height, Size: m.Size, Sha256: m.SHA256, Url: base + m.Path(publicID),
		ThumbnailUrl: base + m.ThumbnailPath(publicID), CreatedAt: m.CreatedAt}
}
