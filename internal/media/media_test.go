package media_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/media"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// picture is a w×h test image with a gradient (so encoders have something to do).
func picture(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x + y), 255})
		}
	}
	return img
}

func encoded(t *testing.T, format string, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	switch format {
	case "png":
		require.NoError(t, png.Encode(&b, img))
	case "jpeg":
		require.NoError(t, jpeg.Encode(&b, img, nil))
	case "gif":
		require.NoError(t, gif.Encode(&b, img, nil))
	}
	return b.Bytes()
}

// chunk is one PNG chunk with its CRC.
func chunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
	b.WriteString(typ)
	b.Write(data)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	return b.Bytes()
}

// bombPNG is a small, valid PNG whose header declares w×h pixels of one colour:
// a few kilobytes that expand to w*h*4 bytes when decoded.
func bombPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var raw bytes.Buffer
	zw := zlib.NewWriter(&raw)
	row := make([]byte, 1+w) // filter byte + one grey byte per pixel
	for range h {
		_, err := zw.Write(row)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 0 // 8-bit greyscale
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	b.Write(chunk("IHDR", ihdr))
	b.Write(chunk("IDAT", raw.Bytes()))
	b.Write(chunk("IEND", nil))
	return b.Bytes()
}

func setup(t *testing.T) (*media.Service, func(name string) int64, func(acct int64) string) {
	t.Helper()
	pool := dbtest.New(t)
	publicID := func(acct int64) string {
		var pub string
		require.NoError(t, pool.QueryRow(context.Background(), `SELECT public_id FROM accounts WHERE id = $1`, acct).Scan(&pub))
		return pub
	}
	account := func(name string) int64 { return testfactory.New(pool).Account(t, name).ID }
	return media.NewService(pool), account, publicID
}

// count is how many images the account's library holds.
func count(t *testing.T, s *media.Service, acct int64) int {
	t.Helper()
	all, err := s.List(context.Background(), acct, nil, 1000)
	require.NoError(t, err)
	return len(all)
}

// TestUploadStoresReencodedImages: PNG, JPEG, GIF are stored as bytes this
// package wrote (the upload's own bytes are never served), with their
// dimensions, a thumbnail at most 320 on a side, and once per account: the same
// upload twice is one image.
func TestUploadStoresReencodedImages(t *testing.T) {
	t.Parallel()
	s, account, publicID := setup(t)
	ctx := context.Background()
	acct, other := account("a"), account("b")
	for _, format := range []string{"png", "jpeg", "gif"} {
		body := encoded(t, format, picture(640, 200))
		m, created, err := s.Upload(ctx, acct, "logo."+format, "application/octet-stream", body)
		require.NoError(t, err, format)
		require.True(t, created)
		require.Equal(t, "image/"+format, m.ContentType)
		require.Equal(t, [2]int{640, 200}, [2]int{m.Width, m.Height})
		again, created, err := s.Upload(ctx, acct, "other name", "image/"+format, body)
		require.NoError(t, err)
		require.False(t, created, "the same bytes are the same image")
		require.Equal(t, m.ID, again.ID)

		ct, stored, err := s.Public(ctx, publicID(acct), m.SHA256+"."+media.Ext(m.ContentType))
		require.NoError(t, err)
		require.Equal(t, m.ContentType, ct)
		require.Len(t, stored, m.Size)
		cfg, kind, err := image.DecodeConfig(bytes.NewReader(stored))
		require.NoError(t, err)
		require.Equal(t, format, kind)
		require.Equal(t, 640, cfg.Width)

		thumbExt := "png"
		if format == "jpeg" {
			thumbExt = "jpg"
		}
		_, thumb, err := s.Public(ctx, publicID(acct), m.SHA256+".thumb."+thumbExt)
		require.NoError(t, err)
		tc, _, err := image.DecodeConfig(bytes.NewReader(thumb))
		require.NoError(t, err)
		require.Equal(t, [2]int{320, 100}, [2]int{tc.Width, tc.Height})
	}
	require.Equal(t, 3, count(t, s, acct))
	require.Zero(t, count(t, s, other), "another account's library is its own")
}

// TestUploadRefusesHostileFiles: each hostile file is refused with 422 naming the
// field at fault (or 413 for size), and nothing is stored.
func TestUploadRefusesHostileFiles(t *testing.T) {
	t.Parallel()
	s, account, _ := setup(t)
	ctx := context.Background()
	acct := account("a")
	good := encoded(t, "png", picture(64, 64))
	gifJS := append([]byte("GIF89a/*"), encoded(t, "gif", picture(8, 8))[8:]...)
	cases := []struct {
		name, declared, field string
		body                  []byte
	}{
		{"svg with script", "application/octet-stream", "/file",
			[]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)},
		{"svg behind whitespace and a BOM", "application/octet-stream", "/file",
			[]byte("\ufeff \n<?xml version=\"1.0\"?><svg/>")},
		{"html page", "application/octet-stream", "/file", []byte("<!doctype html><html><body>hi</body></html>")},
		{"png with a page after IEND", "image/png", "/file", append(bytes.Clone(good), []byte("<html><script>alert(1)</script>")...)},
		{"png with a zip after IEND", "image/png", "/file", append(bytes.Clone(good), []byte("PK\x03\x04\x14\x00\x00\x00")...)},
		{"png with script in a text chunk", "image/png", "/file",
			append(append(bytes.Clone(good[:33]), chunk("tEXt", []byte("Comment\x00<script>alert(1)</script>"))...), good[33:]...)},
		{"jpeg with bytes after its end", "image/jpeg", "/file", append(encoded(t, "jpeg", picture(32, 32)), []byte("trailing")...)},
		{"gif/javascript polyglot", "image/gif", "/file", gifJS},
		{"decompression bomb", "image/png", "/file", bombPNG(t, 10_000, 10_000)},
		{"truncated png", "image/png", "/file", good[:len(good)/2]},
		{"not an image", "application/octet-stream", "/file", []byte("MZ\x90\x00 an executable")},
		{"declared type lies", "image/jpeg", "/content_type", good},
		{"empty", "image/png", "/file", nil},
	}
	for _, c := range cases {
		_, _, err := s.Upload(ctx, acct, "x.png", c.declared, c.body)
		require.Error(t, err, c.name)
		require.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%s: %v", c.name, err)
		var e *apperr.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, c.field, e.Fields[0].Pointer, c.name)
		t.Logf("%s: %s", c.name, e.Message)
	}
	for _, name := range []string{"../../etc/passwd", `..\boot.ini`, "a/b.png", ".htaccess", "..", "bad\x00name", "rtl\u202egnp.exe", strings.Repeat("a", 256)} {
		_, _, err := s.Upload(ctx, acct, name, "image/png", good)
		var e *apperr.Error
		require.ErrorAs(t, err, &e, "%q", name)
		require.Equal(t, "/name", e.Fields[0].Pointer, "%q", name)
	}
	_, _, err := s.Upload(ctx, acct, "big.png", "image/png", make([]byte, media.MaxBytes+1))
	require.Equal(t, apperr.TooLarge, apperr.CodeOf(err))
	require.Zero(t, count(t, s, acct), "nothing refused was stored")
}

// TestDeleteKeepsWhatASentCampaignShows: an image a campaign past draft names is
// not deleted (409 with the campaign); one only a draft names is; another
// account's image id is not found.
func TestDeleteKeepsWhatASentCampaignShows(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	s := media.NewService(pool)
	fx := testfactory.New(pool)
	a := fx.Account(t, "a")
	acct, pub, other := a.ID, a.PublicID, fx.Account(t, "b").ID
	shown, _, err := s.Upload(ctx, acct, "shown.png", "image/png", encoded(t, "png", picture(20, 20)))
	require.NoError(t, err)
	drafted, _, err := s.Upload(ctx, acct, "drafted.png", "image/png", encoded(t, "png", picture(30, 30)))
	require.NoError(t, err)
	sent := fx.Campaign(t, acct, testfactory.Campaign{Name: "sent", Status: "sent",
		HTML: `<img src="https://mail.example.com` + shown.ThumbnailPath(pub) + `">`})
	fx.Campaign(t, acct, testfactory.Campaign{Name: "draft", HTML: `<img src="` + drafted.Path(pub) + `">`})

	// An A/B test's variant of a sent campaign shows its own image.
	variant, _, err := s.Upload(ctx, acct, "variant.png", "image/png", encoded(t, "png", picture(40, 40)))
	require.NoError(t, err)
	abSent := fx.Campaign(t, acct, testfactory.Campaign{Name: "ab", HTML: "<p>a</p>", Status: "sent", ABMode: "split",
		ABVariants: 2})
	fx.Variant(t, acct, abSent, testfactory.Variant{Idx: 2, HTML: `<img src="` + variant.Path(pub) + `" alt="b">`})
	err = s.Delete(ctx, acct, variant.ID, pub)
	require.Equal(t, apperr.Conflict, apperr.CodeOf(err), "a sent variant's image")

	err = s.Delete(ctx, acct, shown.ID, pub)
	require.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	var e *apperr.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, []int64{sent}, e.Extra["campaign_ids"])
	require.Equal(t, apperr.NotFound, apperr.CodeOf(s.Delete(ctx, other, drafted.ID, pub)), "another account's image")
	require.NoError(t, s.Delete(ctx, acct, drafted.ID, pub))
	_, err = s.Get(ctx, acct, drafted.ID)
	require.Equal(t, apperr.NotFound, apperr.CodeOf(err))
	_, err = s.Get(ctx, acct, shown.ID)
	require.NoError(t, err)
}

// TestPublicNames: only "<sha256>.<ext>" and its thumbnail's name answer; a wrong
// extension, upper-case hex or another account's public id is not found.
func TestPublicNames(t *testing.T) {
	t.Parallel()
	s, account, publicID := setup(t)
	ctx := context.Background()
	acct, other := account("a"), account("b")
	m, _, err := s.Upload(ctx, acct, "p.png", "image/png", encoded(t, "png", picture(10, 10)))
	require.NoError(t, err)
	pub, otherPub := publicID(acct), publicID(other)
	for _, name := range []string{m.SHA256 + ".jpg", m.SHA256 + ".thumb.jpg", strings.ToUpper(m.SHA256) + ".png",
		m.SHA256, m.SHA256 + ".png/../x", "../" + m.SHA256 + ".png"} {
		_, _, err := s.Public(ctx, pub, name)
		require.Equal(t, apperr.NotFound, apperr.CodeOf(err), name)
	}
	_, _, err = s.Public(ctx, otherPub, m.SHA256+".png")
	require.Equal(t, apperr.NotFound, apperr.CodeOf(err))
	_, _, err = s.Public(ctx, pub, m.SHA256+".png")
	require.NoError(t, err)
}
