package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Store holds the bytes of images and thumbnails outside PostgreSQL, under
// content-addressed keys "<account_id>/<sha256>.<ext>" and
// "<account_id>/<sha256>.thumb.<ext>": the key names the bytes, so writing a key
// again writes the same bytes, and a key is never changed in place.
//
// A row of table media is what makes an image exist: the bytes are written
// before the row (a crash in between leaves bytes no row names, never a row
// without bytes) and removed after it (see Service.Upload and Service.Delete).
type Store interface {
	// Put stores b under key, whole or not at all.
	Put(ctx context.Context, key, contentType string, b []byte) error
	// Get is the bytes under key; errBlobMissing when there are none.
	Get(ctx context.Context, key string) ([]byte, error)
	// Delete removes key; a key that is not there is no error.
	Delete(ctx context.Context, key string) error
	// Walk calls fn with every key under prefix ("" for all, "<account_id>/"
	// for one account's) and when its bytes were last written. Anything in the
	// store that is not a media key is not reported.
	Walk(ctx context.Context, prefix string, fn func(key string, modified time.Time) error) error
}

// errBlobMissing is a key with no bytes behind it.
var errBlobMissing = errors.New("media: no bytes under this key")

// keyRE is every key the service makes: an account id, a SHA-256 in lower-case
// hex and an extension. A store refuses anything else, so no key is a path.
var keyRE = regexp.MustCompile(`^[0-9]{1,19}/[0-9a-f]{64}(\.thumb)?\.(png|jpg|gif)$`)

func checkKey(key string) error {
	if !keyRE.MatchString(key) {
		return fmt.Errorf("media: %q is not a media key", key)
	}
	return nil
}

// blobKeys are the keys of the image m of accountID and of its thumbnail.
func blobKeys(accountID int64, m Media) (image, thumb string) {
	base := fmt.Sprintf("%d/%s", accountID, m.SHA256)
	return base + "." + Ext(m.ContentType), base + ".thumb." + Ext(thumbType(m.ContentType))
}

// Dir is a Store on the local filesystem, under its root.
type Dir struct{ root string }

// NewDir is the Store under root, made (0o750) when first written.
func NewDir(root string) *Dir { return &Dir{root: root} }

// Put writes b to a temporary file beside the key's, syncs it and renames it
// into place: the key holds all of b or nothing, even across a crash.
func (d *Dir) Put(_ context.Context, key, _ string, b []byte) (err error) {
	if err := checkKey(key); err != nil {
		return err
	}
	p := filepath.Join(d.root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(b); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), p); err != nil {
		return err
	}
	// The rename is durable once the directory is synced.
	dir, err := os.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// Get reads the key's file.
func (d *Dir) Get(_ context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errBlobMissing
	}
	return b, err
}

// Delete removes the key's file.
func (d *Dir) Delete(_ context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(d.root, filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Walk walks the directory under root/prefix.
func (d *Dir) Walk(ctx context.Context, prefix string, fn func(key string, modified time.Time) error) error {
	return d.walk(ctx, prefix, func(key string, e fs.DirEntry) error {
		if !keyRE.MatchString(key) {
			return nil
		}
		return d.report(key, e, fn)
	})
}

// walk calls fn with every file under root/prefix and its key (its path under
// the root, slash-separated); a directory not made yet holds nothing.
func (d *Dir) walk(ctx context.Context, prefix string, fn func(key string, e fs.DirEntry) error) error {
	start := filepath.Join(d.root, filepath.FromSlash(prefix))
	if _, err := os.Stat(start); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return filepath.WalkDir(start, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		return fn(filepath.ToSlash(rel), e)
	})
}

// report is fn of key with its file's modification time (nothing when it was
// removed meanwhile).
func (d *Dir) report(key string, e fs.DirEntry, fn func(key string, modified time.Time) error) error {
	info, err := e.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	return fn(key, info.ModTime())
}

// tempRE is a temporary file of a Put (see Put).
var tempRE = regexp.MustCompile(`^[0-9]{1,19}/\.upload-[0-9]+$`)

// RemoveStale removes the temporary files of Puts cut short (a crash between
// creating and renaming one) last written before cutoff, and says how many.
func (d *Dir) RemoveStale(ctx context.Context, cutoff time.Time) (int, error) {
	n := 0
	err := d.walk(ctx, "", func(key string, e fs.DirEntry) error {
		if !tempRE.MatchString(key) {
			return nil
		}
		return d.report(key, e, func(key string, modified time.Time) error {
			if !modified.Before(cutoff) {
				return nil
			}
			err := os.Remove(filepath.Join(d.root, filepath.FromSlash(key)))
			if err == nil {
				n++
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			return nil
		})
	})
	return n, err
}

// S3Config is an S3-compatible store: AWS S3, MinIO, Ceph, R2, B2, GCS's XML API.
type S3Config struct {
	Endpoint  string // host[:port], no scheme
	Bucket    string
	Region    string // empty: us-east-1
	AccessKey string
	SecretKey string
	Prefix    string // put before every key, e.g. "media/"
	Insecure  bool   // http instead of https (a local MinIO)
	PathStyle bool   // bucket in the path rather than the host name
	// Transport carries the requests (nil: http.DefaultTransport); tests point it
	// at a fake.
	Transport http.RoundTripper
}

// S3 is a Store in an S3-compatible bucket. The bucket stays private: images
// are served by the service (GET /media/...), with its headers and checks.
type S3 struct {
	c      *minio.Client
	bucket string
	prefix string
}

// NewS3 is the Store in cfg's bucket. It makes no request.
func NewS3(cfg S3Config) (*S3, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("media: an S3 store needs an endpoint and a bucket")
	}
	if strings.Contains(cfg.Endpoint, "://") {
		return nil, fmt.Errorf("media: the S3 endpoint is host[:port] without a scheme, not %q", cfg.Endpoint)
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""), Secure: !cfg.Insecure,
		Region: region, BucketLookup: lookup, Transport: cfg.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("media: S3 store: %w", err)
	}
	return &S3{c: c, bucket: cfg.Bucket, prefix: cfg.Prefix}, nil
}

// Put uploads b in one PUT: an object is visible whole or not at all.
func (s *S3) Put(ctx context.Context, key, contentType string, b []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	_, err := s.c.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(b), int64(len(b)),
		minio.PutObjectOptions{ContentType: contentType, CacheControl: "public, max-age=31536000, immutable"})
	return err
}

// Get downloads the key's object.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	o, err := s.c.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s3Missing(err)
	}
	defer o.Close()
	b, err := io.ReadAll(io.LimitReader(o, maxStored))
	if err != nil {
		return nil, s3Missing(err)
	}
	return b, nil
}

// Delete removes the key's object (S3 answers 204 to a missing key too).
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.c.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
}

// Walk lists the bucket's objects under the prefix.
func (s *S3) Walk(ctx context.Context, prefix string, fn func(key string, modified time.Time) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the listing's goroutine when fn stops early
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}) {
		if o.Err != nil {
			return o.Err
		}
		key := strings.TrimPrefix(o.Key, s.prefix)
		if !keyRE.MatchString(key) {
			continue
		}
		if err := fn(key, o.LastModified); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func s3Missing(err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return errBlobMissing
	}
	return err
}

// maxStored bounds what is read back from a store: a re-encoded image may be
// larger than its upload, never near this.
const maxStored = 64 << 20
