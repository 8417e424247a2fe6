package httpapi_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// pngBytes is a w×h PNG.
func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 5), 90, 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// TestMediaLibrary: an upload is 201 with its public addresses (200 and the same
// image the second time, which changes nothing), recorded in the audit log; the public address serves
// the stored bytes with a year of caching, an ETag (304 when it matches),
// nosniff and a sandboxing policy, to anyone; a body that is not an image is
// refused (415 for a type not taken, SVG's included, 422 naming the field for markup or a lying
// type, 413 past 5 MiB) and stores nothing; a deleted image is gone, also from
// its public address.
func TestMediaLibrary(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := pngBytes(t, 400, 100)
	res := e.do(e.keyA, "POST", "/v1/media?name=banner.png", body, "Content-Type", "image/png")
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	m := decodeAs[api.Media](t, res)
	require.Equal(t, "banner.png", m.Name)
	require.Equal(t, [2]int{400, 100}, [2]int{m.Width, m.Height})
	require.True(t, strings.HasSuffix(m.Url, "/"+m.Sha256+".png"), m.Url)
	require.True(t, strings.HasSuffix(m.ThumbnailUrl, "/"+m.Sha256+".thumb.png"), m.ThumbnailUrl)
	res = e.do(e.keyA, "POST", "/v1/media", body, "Content-Type", "application/octet-stream")
	require.Equal(t, http.StatusOK, res.Status, "the same bytes again: the stored image")
	require.Equal(t, m.Id, decodeAs[api.Media](t, res).Id)

	res = e.do(e.keyA, "GET", "/v1/audit-log?action=media.upload", nil)
	require.Equal(t, http.StatusOK, res.Status)
	log := decodeAs[api.AuditEntryPage](t, res)
	require.Len(t, log.Data, 2, "both uploads are recorded")
	require.True(t, log.Data[1].InChangeTx, "the first, in the transaction that stored the image")
	require.Equal(t, itoa(m.Id), *log.Data[1].TargetId)
	require.False(t, log.Data[0].InChangeTx, "the second changed nothing")

	path := m.Url[strings.Index(m.Url, "/media/"):]
	get := func(p string, headers ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", p, nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		return rec
	}
	rec := get(path)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "image/png", rec.Header().Get("Content-Type"))
	require.Equal(t, "public, max-age=31536000, immutable", rec.Header().Get("Cache-Control"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	require.Contains(t, rec.Header().Get("Content-Security-Policy"), "sandbox")
	require.Len(t, rec.Body.Bytes(), m.Size)
	cfg, err := png.DecodeConfig(bytes.NewReader(rec.Body.Bytes()))
	require.NoError(t, err)
	require.Equal(t, 400, cfg.Width)
	etag := rec.Header().Get("ETag")
	require.Equal(t, http.StatusNotModified, get(path, "If-None-Match", etag).Code)
	thumb := get(m.ThumbnailUrl[strings.Index(m.ThumbnailUrl, "/media/"):])
	require.Equal(t, http.StatusOK, thumb.Code)
	tc, err := png.DecodeConfig(bytes.NewReader(thumb.Body.Bytes()))
	require.NoError(t, err)
	require.Equal(t, [2]int{320, 80}, [2]int{tc.Width, tc.Height})

	before := e.do(e.keyA, "GET", "/v1/media", nil)
	for _, c := range []struct {
		ct     string
		body   []byte
		status int
		field  string
	}{
		{"text/plain", body, http.StatusUnsupportedMediaType, ""},
		{"image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), http.StatusUnsupportedMediaType, ""},
		{"application/octet-stream", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), http.StatusUnprocessableEntity, "/file"},
		{"image/jpeg", body, http.StatusUnprocessableEntity, "/content_type"},
		{"image/png", append(bytes.Clone(body), "PK\x03\x04"...), http.StatusUnprocessableEntity, "/file"},
		{"image/png", make([]byte, 5<<20+1), http.StatusRequestEntityTooLarge, ""},
	} {
		res := e.do(e.keyA, "POST", "/v1/media?name=x.png", c.body, "Content-Type", c.ct)
		require.Equal(t, c.status, res.Status, "%s: %s", c.ct, res.Body)
		require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
		if c.field != "" {
			require.Contains(t, string(res.Body), `"pointer":"`+c.field+`"`)
		}
	}
	res = e.do(e.keyA, "POST", "/v1/media?name=../../etc/passwd", body, "Content-Type", "image/png")
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), `"pointer":"/name"`)
	require.Equal(t, string(before.Body), string(e.do(e.keyA, "GET", "/v1/media", nil).Body), "nothing refused was stored")

	res = e.do(e.keyA, "DELETE", "/v1/media/"+itoa(m.Id), nil)
	require.Equal(t, http.StatusNoContent, res.Status, string(res.Body))
	require.Equal(t, http.StatusNotFound, e.do(e.keyA, "GET", "/v1/media/"+itoa(m.Id), nil).Status)
	require.Equal(t, http.StatusNotFound, get(path).Code)
}
