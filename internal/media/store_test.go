package media_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/media"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// fakeS3 is the outside world of the S3 store: a bucket answering the object
// calls minio-go makes (PUT, GET, HEAD, DELETE of one object, path style),
// including the aws-chunked bodies with a trailing checksum it sends over TLS,
// and the listing of the bucket under a prefix (ListObjectsV2, one page).
// Any other request fails the test.
type fakeS3 struct {
	t        *testing.T
	bucket   string
	mu       sync.Mutex
	objects  map[string][]byte
	types    map[string]string
	modified map[string]time.Time
}

// list answers ListObjectsV2 with the objects under the request's prefix, in key order.
func (f *fakeS3) list(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prefix := r.URL.Query().Get("prefix")
	var keys []string
	for k := range f.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	w.Header().Set("Content-Type", "application/xml")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>`,
		f.bucket, prefix, len(keys))
	for _, k := range keys {
		fmt.Fprintf(w, `<Contents><Key>%s</Key><LastModified>%s</LastModified><ETag>"%d"</ETag><Size>%d</Size><StorageClass>STANDARD</StorageClass></Contents>`,
			k, f.modified[k].UTC().Format("2006-01-02T15:04:05.000Z"), len(f.objects[k]), len(f.objects[k]))
	}
	fmt.Fprint(w, `</ListBucketResult>`)
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Authorization"), "Credential=AKIDTEST/") {
		http.Error(w, "unsigned", http.StatusForbidden)
		f.t.Errorf("request without the store's credential: %s %s", r.Method, r.URL)
		return
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket == f.bucket && key == "" && r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
		f.list(w, r)
		return
	}
	if bucket != f.bucket || key == "" || r.URL.RawQuery != "" {
		http.Error(w, "not implemented", http.StatusNotImplemented)
		f.t.Errorf("a call the store should not make: %s %s", r.Method, r.URL)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		body, err := readS3Body(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			f.t.Errorf("PUT %s: %v", key, err)
			return
		}
		f.objects[key], f.types[key], f.modified[key] = body, r.Header.Get("Content-Type"), time.Now()
		w.Header().Set("ETag", `"`+strconv.Itoa(len(body))+`"`)
	case http.MethodGet, http.MethodHead:
		b, ok := f.objects[key]
		if !ok {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusNotFound)
			if r.Method == http.MethodGet {
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>%s</Key><BucketName>%s</BucketName></Error>`, key, bucket)
			}
			return
		}
		w.Header().Set("Content-Type", f.types[key])
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Header().Set("ETag", `"`+strconv.Itoa(len(b))+`"`)
		w.Header().Set("Last-Modified", "Sun, 06 Dec 2026 12:00:00 GMT")
		if r.Method == http.MethodGet {
			_, _ = w.Write(b)
		}
	case http.MethodDelete:
		delete(f.objects, key)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "not implemented", http.StatusNotImplemented)
		f.t.Errorf("a call the store should not make: %s %s", r.Method, r.URL)
	}
}

// readS3Body is a PUT's object: the body, or its aws-chunked decoding
// ("<hex size>[;chunk-signature=…]\r\n<data>\r\n" … "0\r\n<trailers>\r\n").
func readS3Body(r *http.Request) ([]byte, error) {
	if !strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") {
		return io.ReadAll(r.Body)
	}
	br := bufio.NewReader(r.Body)
	var out []byte
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		sizeHex, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		n, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("chunk size %q: %w", line, err)
		}
		if n == 0 {
			break
		}
		chunk := make([]byte, n+2)
		if _, err := io.ReadFull(br, chunk); err != nil {
			return nil, err
		}
		out = append(out, chunk[:n]...)
	}
	if want := r.Header.Get("X-Amz-Decoded-Content-Length"); want != "" && want != strconv.Itoa(len(out)) {
		return nil, fmt.Errorf("decoded %d bytes, the request says %s", len(out), want)
	}
	return out, nil
}

// newFakeS3 is an S3 store (over TLS, as in production) in a fake bucket.
func newFakeS3(t *testing.T) (*media.S3, *fakeS3) {
	t.Helper()
	f := &fakeS3{t: t, bucket: "images", objects: map[string][]byte{}, types: map[string]string{}, modified: map[string]time.Time{}}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	s, err := media.NewS3(media.S3Config{Endpoint: strings.TrimPrefix(srv.URL, "https://"), Bucket: "images",
		Region: "eu-west-1", AccessKey: "AKIDTEST", SecretKey: "secret", Prefix: "media/", PathStyle: true,
		Transport: srv.Client().Transport})
	require.NoError(t, err)
	return s, f
}

// TestStoresHoldTheBytes: with a directory or an S3 bucket as the store, an
// upload's image and thumbnail are there under content-addressed keys (the row
// holds none), served back as they were stored; the same bytes twice are one
// object; a delete removes the row, then the bytes.
func TestStoresHoldTheBytes(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	s3, fake := newFakeS3(t)
	stores := []struct {
		name  string
		store media.Store
		keys  func() []string
	}{
		{"fs", media.NewDir(dir), func() []string {
			var keys []string
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, _ error) error {
				if !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					keys = append(keys, filepath.ToSlash(rel))
				}
				return nil
			})
			return keys
		}},
		{"s3", s3, func() []string {
			fake.mu.Lock()
			defer fake.mu.Unlock()
			var keys []string
			for k := range fake.objects {
				keys = append(keys, k)
			}
			return keys
		}},
	}
	for _, st := range stores {
		s := media.NewServiceIn(pool, st.store)
		a := testfactory.New(pool).Account(t, st.name)
		acct, pub := a.ID, a.PublicID
		body := encoded(t, "png", picture(640, 200))
		m, created, err := s.Upload(ctx, acct, "logo.png", "image/png", body)
		require.NoError(t, err, st.name)
		require.True(t, created)
		_, _, err = s.Upload(ctx, acct, "again.png", "image/png", body)
		require.NoError(t, err)

		var inRow bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT content IS NOT NULL OR thumbnail IS NOT NULL FROM media WHERE id = $1`, m.ID).Scan(&inRow))
		require.False(t, inRow, "%s: the bytes are in the store, not the row", st.name)
		prefix := ""
		if st.name == "s3" {
			prefix = "media/"
		}
		image := fmt.Sprintf("%s%d/%s.png", prefix, acct, m.SHA256)
		thumb := fmt.Sprintf("%s%d/%s.thumb.png", prefix, acct, m.SHA256)
		require.ElementsMatch(t, []string{image, thumb}, st.keys(), st.name)

		ct, got, err := s.Public(ctx, pub, m.SHA256+".png")
		require.NoError(t, err)
		require.Equal(t, "image/png", ct)
		require.Len(t, got, m.Size)
		_, got, err = s.Public(ctx, pub, m.SHA256+".thumb.png")
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(got, []byte("\x89PNG")))

		require.NoError(t, s.Delete(ctx, acct, m.ID, pub))
		require.Empty(t, st.keys(), "%s: deleted, row and bytes", st.name)
		_, _, err = s.Public(ctx, pub, m.SHA256+".png")
		require.Equal(t, apperr.NotFound, apperr.CodeOf(err))
	}
}

// failingStore fails its Puts from the failAt-th one (1-based) on, keeping
// what went before in a directory.
type failingStore struct {
	*media.Dir
	mu     sync.Mutex
	puts   int
	failAt int
}

func (f *failingStore) Put(ctx context.Context, key, ct string, b []byte) error {
	f.mu.Lock()
	f.puts++
	fail := f.puts >= f.failAt
	f.mu.Unlock()
	if fail {
		return errors.New("disk full")
	}
	return f.Dir.Put(ctx, key, ct, b)
}

// TestStoreFailureLeavesNoImage: the bytes are written before the row, so a
// store that fails on the image or on its thumbnail (the first written and
// kept) leaves no image in the library, and the same upload afterwards works.
// Images stored in their rows before a store was configured are still served.
func TestStoreFailureLeavesNoImage(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	a := testfactory.New(pool).Account(t, "a")
	acct, pub := a.ID, a.PublicID
	old, _, err := media.NewService(pool).Upload(ctx, acct, "old.png", "image/png", encoded(t, "png", picture(12, 12)))
	require.NoError(t, err)

	dir := t.TempDir()
	body := encoded(t, "png", picture(50, 50))
	for _, failAt := range []int{1, 2} {
		s := media.NewServiceIn(pool, &failingStore{Dir: media.NewDir(dir), failAt: failAt})
		_, _, err := s.Upload(ctx, acct, "new.png", "image/png", body)
		require.ErrorContains(t, err, "disk full")
		require.Equal(t, 1, count(t, s, acct), "failing at put %d: no row, only the old image", failAt)
	}
	s := media.NewServiceIn(pool, media.NewDir(dir))
	m, created, err := s.Upload(ctx, acct, "new.png", "image/png", body)
	require.NoError(t, err)
	require.True(t, created)
	_, _, err = s.Public(ctx, pub, m.SHA256+".thumb.png")
	require.NoError(t, err)
	_, got, err := s.Public(ctx, pub, old.SHA256+".png")
	require.NoError(t, err, "an image stored in its row is served from it")
	require.Len(t, got, old.Size)

	// A row whose bytes are in a store, read by a process configured without one,
	// is an error, not an empty image.
	_, _, err = media.NewService(pool).Public(ctx, pub, m.SHA256+".png")
	require.ErrorContains(t, err, "SENDONCE_MEDIA_STORAGE=db")
}

// TestStoreKeysAreNeverPaths: a store refuses any key the service would not
// make, so no name reaches the filesystem or the bucket as a path.
func TestStoreKeysAreNeverPaths(t *testing.T) {
	t.Parallel()
	d := media.NewDir(t.TempDir())
	sum := strings.Repeat("ab", 32)
	for _, key := range []string{"../" + sum + ".png", "1/../../" + sum + ".png", "/etc/passwd", "1/" + sum + ".svg",
		"1/" + strings.ToUpper(sum) + ".png", "1/" + sum + ".png/..", "a/" + sum + ".png"} {
		require.Error(t, d.Put(context.Background(), key, "image/png", []byte("x")), key)
		_, err := d.Get(context.Background(), key)
		require.Error(t, err, key)
	}
	require.NoError(t, d.Put(context.Background(), "1/"+sum+".png", "image/png", []byte("x")))
}
