package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// Limits of one image. MaxPixels bounds the memory a decode may take (4 bytes a
// pixel: 64 MiB at the bound) before anything is decoded: the dimensions are read
// from the header first, so a small file that declares a huge canvas (a
// decompression bomb) is refused without being expanded.
const (
	MaxBytes     = 5 << 20
	MaxPixels    = 4096 * 4096
	MaxSide      = 10_000
	ThumbMaxSide = 320
)

// kind is a format the library takes, told by its first bytes (never by the
// name or the declared type alone).
type kind string

const (
	kindPNG  kind = "image/png"
	kindJPEG kind = "image/jpeg"
	kindGIF  kind = "image/gif"
	kindWebP kind = "image/webp"
)

// sniff tells the format from the magic bytes. Markup (SVG, HTML, XML) is named
// as such, since it can carry script and is never accepted.
func sniff(b []byte) (kind, error) {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return kindPNG, nil
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return kindJPEG, nil
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return kindGIF, nil
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return kindWebP, nil
	}
	if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '<' {
		return "", errors.New("SVG, HTML and other markup are not accepted (they can carry script): upload PNG, JPEG, GIF or WebP")
	}
	return "", errors.New("not an image this library takes: PNG, JPEG, GIF or WebP")
}

// markup is what a file made to be read both as an image and as a page or a
// script (a polyglot) carries; an image has no reason to hold any of it. The
// scan reads the compressed pixel data too, where a five-byte sequence occurs by
// chance: about once in 5,000 files of 5 MB, once in a million of 25 KB. Such a
// file is refused with the sequence named, and saved again it passes.
var markup = [][]byte{[]byte("<script"), []byte("<html"), []byte("<iframe"), []byte("<?php"),
	[]byte("javascript:"), []byte("<object"), []byte("<embed"), []byte("<svg "), []byte("<!doctype")}

// checkWhole refuses a file whose bytes go on past the image's own end (an
// archive or a page appended: the classic polyglot) or that carries markup
// anywhere (a page hidden in a comment or a text chunk).
func checkWhole(k kind, b []byte) error {
	lower := bytes.ToLower(b)
	for _, m := range markup {
		if bytes.Contains(lower, m) {
			return fmt.Errorf("the file carries markup (%q): an image made to be read as a page too is refused", m)
		}
	}
	switch k {
	case kindPNG:
		end, err := pngEnd(b)
		if err != nil {
			return err
		}
		if end != len(b) {
			return fmt.Errorf("%d bytes follow the PNG's IEND chunk", len(b)-end)
		}
	case kindJPEG:
		if !bytes.HasSuffix(b, []byte{0xFF, 0xD9}) {
			return errors.New("the JPEG does not end with its end-of-image marker (bytes follow it, or it is cut short)")
		}
	case kindGIF:
		if b[len(b)-1] != 0x3B {
			return errors.New("the GIF does not end with its trailer (bytes follow it, or it is cut short)")
		}
	case kindWebP:
		if n := int(binary.LittleEndian.Uint32(b[4:8])); n+8 != len(b) && n+9 != len(b) { // a RIFF chunk of odd size is padded
			return errors.New("the WebP's RIFF size does not match the file (bytes follow it, or it is cut short)")
		}
	}
	return nil
}

// pngEnd walks a PNG's chunks and returns the offset just past IEND.
func pngEnd(b []byte) (int, error) {
	off := 8
	for off+12 <= len(b) {
		n := int(binary.BigEndian.Uint32(b[off : off+4]))
		if n < 0 || n > len(b) {
			break
		}
		typ := string(b[off+4 : off+8])
		next := off + 12 + n
		if next > len(b) {
			break
		}
		if typ == "IEND" {
			return next, nil
		}
		off = next
	}
	return 0, errors.New("the PNG has no IEND chunk (it is cut short or not a PNG)")
}

// decoded is a checked image: what is stored (re-encoded by us) and its thumbnail.
type decoded struct {
	contentType   string
	width, height int
	content       []byte
	thumbnail     []byte
}

// decode checks b as an image of kind k and re-encodes it: what is stored and
// served is always bytes this package wrote, never the upload, so whatever an
// upload hid in metadata, comments or after its end is gone (and with it EXIF
// data such as a photo's location). PNG stays PNG, JPEG stays JPEG (quality 90),
// GIF keeps its first frame (an animation is not decoded: its frames are the
// decompression risk), WebP becomes PNG (Go has no WebP encoder).
func decode(k kind, b []byte) (decoded, error) {
	var cfg image.Config
	var err error
	switch k {
	case kindPNG:
		cfg, err = png.DecodeConfig(bytes.NewReader(b))
	case kindJPEG:
		cfg, err = jpeg.DecodeConfig(bytes.NewReader(b))
	case kindGIF:
		cfg, err = gif.DecodeConfig(bytes.NewReader(b))
	case kindWebP:
		cfg, err = webp.DecodeConfig(bytes.NewReader(b))
	}
	if err != nil {
		return decoded{}, fmt.Errorf("the %s cannot be read: %v", k, err)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxSide || cfg.Height > MaxSide || cfg.Width*cfg.Height > MaxPixels {
		return decoded{}, fmt.Errorf("the image is %d×%d pixels; at most %d pixels and %d on a side", cfg.Width, cfg.Height, MaxPixels, MaxSide)
	}
	var img image.Image
	switch k {
	case kindPNG:
		img, err = png.Decode(bytes.NewReader(b))
	case kindJPEG:
		img, err = jpeg.Decode(bytes.NewReader(b))
	case kindGIF:
		img, err = gif.Decode(bytes.NewReader(b))
	case kindWebP:
		img, err = webp.Decode(bytes.NewReader(b))
	}
	if err != nil {
		return decoded{}, fmt.Errorf("the %s cannot be read: %v", k, err)
	}
	if r := img.Bounds(); r.Dx() != cfg.Width || r.Dy() != cfg.Height {
		return decoded{}, fmt.Errorf("the %s's frame (%d×%d) differs from its header (%d×%d)", k, r.Dx(), r.Dy(), cfg.Width, cfg.Height)
	}
	out := decoded{width: cfg.Width, height: cfg.Height}
	var buf bytes.Buffer
	switch k {
	case kindJPEG:
		out.contentType = string(kindJPEG)
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	case kindGIF:
		out.contentType = string(kindGIF)
		err = gif.Encode(&buf, img, nil)
	default:
		out.contentType = string(kindPNG)
		err = png.Encode(&buf, img)
	}
	if err != nil {
		return decoded{}, err
	}
	out.content = bytes.Clone(buf.Bytes())
	if out.thumbnail, err = thumbnail(img, out.contentType); err != nil {
		return decoded{}, err
	}
	return out, nil
}

// thumbnail is img scaled to fit ThumbMaxSide (never enlarged), JPEG for a
// JPEG, PNG otherwise.
func thumbnail(img image.Image, contentType string) ([]byte, error) {
	r := img.Bounds()
	w, h := r.Dx(), r.Dy()
	if w > ThumbMaxSide || h > ThumbMaxSide {
		if w >= h {
			w, h = ThumbMaxSide, max(1, h*ThumbMaxSide/r.Dx())
		} else {
			w, h = max(1, w*ThumbMaxSide/r.Dy()), ThumbMaxSide
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, r, draw.Src, nil)
	var buf bytes.Buffer
	var err error
	if thumbType(contentType) == string(kindJPEG) {
		err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 85})
	} else {
		err = png.Encode(&buf, dst)
	}
	return buf.Bytes(), err
}

// thumbType is the content type of the thumbnail of an image stored as
// contentType: JPEG for a JPEG (a photo), PNG for the rest (sharp edges, transparency).
func thumbType(contentType string) string {
	if contentType == string(kindJPEG) {
		return string(kindJPEG)
	}
	return string(kindPNG)
}

// Ext is the file extension of a stored content type, for the public address.
func Ext(contentType string) string {
	switch contentType {
	case string(kindJPEG):
		return "jpg"
	case string(kindGIF):
		return "gif"
	default:
		return "png"
	}
}
