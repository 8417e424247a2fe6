// Package media is an account's image library: uploads checked and re-encoded
// (image.go), stored once per account by the SHA-256 of the stored bytes with a
// thumbnail (migration 00660), listed and deleted through the API and served
// publicly at /media/{account_public_id}/{sha256}.{ext} with long cache headers,
// for campaigns, templates and the dashboard's editors to show.
package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/quota"
	"github.com/sendonce/sendonce/internal/store"
)

// An account's library holds at most MaxImages images of MaxLibraryBytes in all
// (the stored, re-encoded sizes): 403 quota-exceeded past either.
const (
	MaxImages       = 2000
	MaxLibraryBytes = 1 << 30
	// MaxNameBytes bounds an image's name.
	MaxNameBytes = 255
)

// The quotas, as the problem's "quota" member names them.
const (
	QuotaImages = "media_images"
	QuotaBytes  = "media_bytes"
)

// Media is one image of the library.
type Media struct {
	ID          int64
	SHA256      string // hex
	Name        string
	ContentType string
	Width       int
	Height      int
	Size        int
	CreatedAt   time.Time
}

// Path is the image's public path, under the account's public id.
func (m Media) Path(publicID string) string {
	return "/media/" + publicID + "/" + m.SHA256 + "." + Ext(m.ContentType)
}

// ThumbnailPath is the public path of the image's thumbnail.
func (m Media) ThumbnailPath(publicID string) string {
	return "/media/" + publicID + "/" + m.SHA256 + ".thumb." + Ext(thumbType(m.ContentType))
}

// Service is the media library.
type Service struct {
	pool *pgxpool.Pool
	// blobs holds new images' bytes; nil: in their rows, in PostgreSQL.
	blobs Store
}

// NewService returns the library on pool, with the images' bytes in their rows.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

// NewServiceIn returns the library on pool with new images' bytes in blobs
// (nil: in their rows). Images stored before, in their rows, stay there.
func NewServiceIn(pool *pgxpool.Pool, blobs Store) *Service {
	return &Service{pool: pool, blobs: blobs}
}

// CheckName validates an image's name: a display name, never a path. Empty
// becomes "image".
func CheckName(name string) (string, error) {
	if name == "" {
		return "image", nil
	}
	switch {
	case len(name) > MaxNameBytes:
		return "", fmt.Errorf("name is at most %d bytes", MaxNameBytes)
	case !utf8.ValidString(name):
		return "", errors.New("name must be UTF-8")
	case strings.ContainsAny(name, `/\`), name == ".", name == "..", strings.HasPrefix(name, "."):
		return "", errors.New("name is a file name, not a path: no slash, backslash or leading dot")
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return "", errors.New("name must not hold control or bidirectional-control characters")
		}
	}
	return name, nil
}

// Upload checks body as an image and stores it under name. declared is the
// request's Content-Type (image/png, image/jpeg, image/gif, image/webp, or
// application/octet-stream to let the bytes tell). created is false when the
// account already had these bytes: the stored image is answered, nothing added.
// A refused file changes nothing: 422 naming the field at fault (/name,
// /content_type, /file), 403 quota-exceeded past the library's quotas.
func (s *Service) Upload(ctx context.Context, accountID int64, name, declared string, body []byte) (m Media, created bool, err error) {
	if name, err = CheckName(name); err != nil {
		return Media{}, false, apperr.Invalidf("/name", "%s", err.Error())
	}
	if len(body) == 0 {
		return Media{}, false, apperr.Invalidf("/file", "the body is empty: send the image's bytes")
	}
	if len(body) > MaxBytes {
		return Media{}, false, apperr.New(apperr.TooLarge, "an image is at most %d bytes", MaxBytes)
	}
	k, err := sniff(body)
	if err != nil {
		return Media{}, false, apperr.Invalidf("/file", "%s", err.Error())
	}
	if declared != "application/octet-stream" && declared != string(k) {
		return Media{}, false, apperr.Invalidf("/content_type", "the body is %s, not the %s its Content-Type says", k, declared)
	}
	if err := checkWhole(k, body); err != nil {
		return Media{}, false, apperr.Invalidf("/file", "%s", err.Error())
	}
	d, err := decode(k, body)
	if err != nil {
		return Media{}, false, apperr.Invalidf("/file", "%s", err.Error())
	}
	sum := sha256.Sum256(d.content)
	// These bytes already stored: the stored image, in a transaction rolled back
	// so that nothing, not even an audit entry, is written.
	errExists := errors.New("exists")
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := q.MediaLockAccount(ctx, accountID); err != nil {
			return err
		}
		if row, err := q.MediaGetBySha(ctx, store.MediaGetByShaParams{AccountID: accountID, Sha256: sum[:]}); err == nil {
			m = fromRow(row.ID, row.Sha256, row.Name, row.ContentType, row.Width, row.Height, row.Size, row.CreatedAt)
			return errExists
		} else if !postgres.NoRows(err) {
			return err
		}
		use, err := q.MediaUsage(ctx, accountID)
		if err != nil {
			return err
		}
		if use.Images >= MaxImages {
			return quota.Exceeded(QuotaImages, MaxImages, use.Images)
		}
		if use.Bytes+int64(len(d.content)) > MaxLibraryBytes {
			return quota.Exceeded(QuotaBytes, MaxLibraryBytes, use.Bytes)
		}
		content, thumbnail := d.content, d.thumbnail
		if s.blobs != nil {
			// The bytes first, the row after: a crash or an error in between
			// leaves bytes that no row names (unseen, written again by the same
			// upload), never a row without its bytes. Under the account's lock, so
			// that a delete's sweep of these keys (sweep) cannot run in between.
			image, thumb := blobKeys(accountID, Media{SHA256: hex.EncodeToString(sum[:]), ContentType: d.contentType})
			if err := s.blobs.Put(ctx, image, d.contentType, d.content); err != nil {
				return fmt.Errorf("media store: %w", err)
			}
			if err := s.blobs.Put(ctx, thumb, thumbType(d.contentType), d.thumbnail); err != nil {
				return fmt.Errorf("media store: %w", err)
			}
			content, thumbnail = nil, nil
		}
		row, err := q.MediaInsert(ctx, store.MediaInsertParams{AccountID: accountID, Sha256: sum[:], Name: name,
			ContentType: d.contentType, Width: int32(d.width), Height: int32(d.height), Size: int32(len(d.content)),
			Content: content, Thumbnail: thumbnail})
		if err != nil {
			return err
		}
		m, created = fromRow(row.ID, row.Sha256, row.Name, row.ContentType, row.Width, row.Height, row.Size, row.CreatedAt), true
		audit.SetTarget(ctx, strconv.FormatInt(m.ID, 10))
		return nil
	})
	if errors.Is(err, errExists) {
		return m, false, nil
	}
	return m, created, err
}

func fromRow(id int64, sum []byte, name, ct string, w, h, size int32, at time.Time) Media {
	return Media{ID: id, SHA256: hex.EncodeToString(sum), Name: name, ContentType: ct,
		Width: int(w), Height: int(h), Size: int(size), CreatedAt: at}
}

// Get is the account's image id.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Media, error) {
	row, err := store.New(s.pool).MediaGet(ctx, store.MediaGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Media{}, notFound(err)
	}
	return fromRow(row.ID, row.Sha256, row.Name, row.ContentType, row.Width, row.Height, row.Size, row.CreatedAt), nil
}

// List is the account's images, newest first, limit of them before beforeID
// (nil: from the newest).
func (s *Service) List(ctx context.Context, accountID int64, beforeID *int64, limit int) ([]Media, error) {
	rows, err := store.New(s.pool).MediaList(ctx, store.MediaListParams{AccountID: accountID, BeforeID: beforeID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Media, 0, len(rows))
	for _, r := range rows {
		out = append(out, fromRow(r.ID, r.Sha256, r.Name, r.ContentType, r.Width, r.Height, r.Size, r.CreatedAt))
	}
	return out, nil
}

// ErrInUse is the conflict of deleting an image that campaigns past draft or
// stored messages show.
func errInUse(campaigns, messages []int64) error {
	return &apperr.Error{Code: apperr.Conflict,
		Message: "campaigns past draft or stored messages show this image (their archive and web view keep showing it); it cannot be deleted",
		Extra:   map[string]any{"campaign_ids": optional.NonNil(campaigns), "message_ids": optional.NonNil(messages)}}
}

// Delete removes the account's image id unless a campaign past draft or a
// stored transactional message shows it (409 naming them): an approved or sent
// campaign's archive and web view, and a message's web view while retention
// keeps it (or its sending, while queued), keep showing the images its content
// names.
func (s *Service) Delete(ctx context.Context, accountID, id int64, publicID string) error {
	var m Media
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := q.MediaLockAccount(ctx, accountID); err != nil {
			return err
		}
		row, err := q.MediaGet(ctx, store.MediaGetParams{AccountID: accountID, ID: id})
		if err != nil {
			return notFound(err)
		}
		m = fromRow(row.ID, row.Sha256, row.Name, row.ContentType, row.Width, row.Height, row.Size, row.CreatedAt)
		// The image's path without its extension covers the thumbnail too.
		used, err := q.MediaUsedBy(ctx, store.MediaUsedByParams{AccountID: accountID,
			Path: "/media/" + publicID + "/" + m.SHA256})
		if err != nil {
			return err
		}
		msgs, err := q.MediaUsedByMessages(ctx, store.MediaUsedByMessagesParams{AccountID: accountID,
			Path: "/media/" + publicID + "/" + m.SHA256})
		if err != nil {
			return err
		}
		if len(used) > 0 || len(msgs) > 0 {
			return errInUse(used, msgs)
		}
		_, err = q.MediaDelete(ctx, store.MediaDeleteParams{AccountID: accountID, ID: id})
		return err
	})
	if err != nil || s.blobs == nil {
		return err
	}
	// The row first, the bytes after: a crash in between leaves bytes no row
	// names, unseen. The image is gone for the client even when this fails.
	return s.sweep(ctx, accountID, m)
}

// sweep removes the bytes of the account's image m from the store unless a row
// names them again (an upload of the same bytes since the delete): under the
// account's lock, which an upload holds from writing the bytes to committing
// its row.
func (s *Service) sweep(ctx context.Context, accountID int64, m Media) error {
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := q.MediaLockAccount(ctx, accountID); err != nil {
			return err
		}
		sum, _ := hex.DecodeString(m.SHA256)
		if _, err := q.MediaGetBySha(ctx, store.MediaGetByShaParams{AccountID: accountID, Sha256: sum}); err == nil {
			return nil
		} else if !postgres.NoRows(err) {
			return err
		}
		image, thumb := blobKeys(accountID, m)
		if err := s.blobs.Delete(ctx, image); err != nil {
			return fmt.Errorf("media store: %w", err)
		}
		if err := s.blobs.Delete(ctx, thumb); err != nil {
			return fmt.Errorf("media store: %w", err)
		}
		return nil
	})
}

// Public is an image (or its thumbnail) by its public name "<sha256>.<ext>" or
// "<sha256>.thumb.<ext>" under the account's public id: its content type and
// bytes. Anything else is not found.
func (s *Service) Public(ctx context.Context, publicID, file string) (contentType string, body []byte, err error) {
	hexSum, rest, _ := strings.Cut(file, ".")
	sum, err := hex.DecodeString(hexSum)
	if err != nil || len(sum) != sha256.Size || hexSum != strings.ToLower(hexSum) {
		return "", nil, apperr.New(apperr.NotFound, "image not found")
	}
	row, err := store.New(s.pool).MediaPublic(ctx, store.MediaPublicParams{PublicID: publicID, Sha256: sum})
	if err != nil {
		return "", nil, notFound(err)
	}
	m := Media{SHA256: hexSum, ContentType: row.ContentType}
	image, thumb := blobKeys(row.AccountID, m)
	switch rest {
	case Ext(row.ContentType):
		return s.bytes(ctx, row.ContentType, row.Content, image)
	case "thumb." + Ext(thumbType(row.ContentType)):
		return s.bytes(ctx, thumbType(row.ContentType), row.Thumbnail, thumb)
	}
	return "", nil, apperr.New(apperr.NotFound, "image not found")
}

// bytes are an image's bytes: inRow when the row holds them, else those in the
// store under key.
func (s *Service) bytes(ctx context.Context, contentType string, inRow []byte, key string) (string, []byte, error) {
	if inRow != nil {
		return contentType, inRow, nil
	}
	if s.blobs == nil {
		return "", nil, fmt.Errorf("media: the image %s is in a media store and this process has none (SENDONCE_MEDIA_STORAGE=db)", key)
	}
	b, err := s.blobs.Get(ctx, key)
	if err != nil {
		return "", nil, fmt.Errorf("media store: %s: %w", key, err)
	}
	return contentType, b, nil
}

func notFound(err error) error {
	if postgres.NoRows(err) {
		return apperr.New(apperr.NotFound, "image not found")
	}
	return err
}

// SweepAge is how old bytes no row names must be before Sweep removes them: far
// longer than an upload holds them unnamed (from writing them to committing its
// row, under the account's lock).
const SweepAge = time.Hour

// Sweep removes from the store the bytes that no row names and that were last
// written more than age ago (SweepAge when 0): those of an upload that failed or
// crashed between writing its bytes and committing its row, of a delete whose
// removal of the bytes failed, and of an account purged (PurgeAccount is its
// first try). Each account's candidates are checked again and removed under the
// account's lock, which an upload holds from writing its bytes to committing its
// row. It returns how many keys (and a directory's stale temporary files) it
// removed. Without a store (bytes in PostgreSQL) there is nothing to sweep.
func (s *Service) Sweep(ctx context.Context, age time.Duration) (int, error) {
	if s.blobs == nil {
		return 0, nil
	}
	if age <= 0 {
		age = SweepAge
	}
	cutoff := time.Now().Add(-age)
	removed := 0
	if d, ok := s.blobs.(*Dir); ok {
		n, err := d.RemoveStale(ctx, cutoff)
		removed += n
		if err != nil {
			return removed, err
		}
	}
	// Keys come grouped by account (a directory per account; S3 lists in key
	// order): each account's old keys are checked together.
	var account int64 = -1
	var old []string
	flush := func() error {
		if len(old) == 0 {
			return nil
		}
		n, err := s.sweepKeys(ctx, account, old)
		removed += n
		old = old[:0]
		return err
	}
	err := s.blobs.Walk(ctx, "", func(key string, modified time.Time) error {
		id, _, _ := keyParts(key)
		if id != account {
			if err := flush(); err != nil {
				return err
			}
			account = id
		}
		if modified.Before(cutoff) {
			old = append(old, key)
		}
		return nil
	})
	if err != nil {
		return removed, err
	}
	return removed, flush()
}

// keyParts are a media key's account id and hex SHA-256.
func keyParts(key string) (accountID int64, sum string, ok bool) {
	acct, rest, _ := strings.Cut(key, "/")
	id, err := strconv.ParseInt(acct, 10, 64)
	sum, _, _ = strings.Cut(rest, ".")
	return id, sum, err == nil && len(sum) == 2*sha256.Size
}

// sweepKeys removes those of accountID's keys that no row of the account names,
// under the account's lock.
func (s *Service) sweepKeys(ctx context.Context, accountID int64, keys []string) (int, error) {
	n := 0
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := q.MediaLockAccount(ctx, accountID); err != nil {
			return err
		}
		shas, err := q.MediaShas(ctx, accountID)
		if err != nil {
			return err
		}
		named := make(map[string]bool, len(shas))
		for _, sum := range shas {
			named[hex.EncodeToString(sum)] = true
		}
		for _, key := range keys {
			if _, sum, ok := keyParts(key); !ok || named[sum] {
				continue
			}
			if err := s.blobs.Delete(ctx, key); err != nil {
				return fmt.Errorf("media store: %w", err)
			}
			n++
		}
		return nil
	})
	return n, err
}

// PurgeAccount removes every image's bytes of accountID from the store: its
// rows are gone (the account's purge deleted them), so no key of the account is
// named any more. A failure leaves the rest to Sweep.
func (s *Service) PurgeAccount(ctx context.Context, accountID int64) (int, error) {
	if s.blobs == nil {
		return 0, nil
	}
	var keys []string
	if err := s.blobs.Walk(ctx, strconv.FormatInt(accountID, 10)+"/", func(key string, _ time.Time) error {
		keys = append(keys, key)
		return nil
	}); err != nil {
		return 0, err
	}
	return s.sweepKeys(ctx, accountID, keys)
}

// RunSweep sweeps the store (Sweep) every interval until ctx ends, logging what
// it removed and its errors. It runs beside the executor on every replica: two
// sweeps at once remove each key once, under the account's lock.
func (s *Service) RunSweep(ctx context.Context, every time.Duration, log *slog.Logger) {
	if s.blobs == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.Sweep(ctx, SweepAge)
		if err != nil && ctx.Err() == nil {
			log.Error("media sweep", "removed", n, "err", err)
		} else if n > 0 {
			log.Info("media sweep removed bytes no image names", "removed", n)
		}
	}
}
