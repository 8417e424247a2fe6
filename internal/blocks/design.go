// Package blocks reads a block design — the JSON the dashboard's visual builder
// saves as content_type "blocks": rows of columns holding headings, text, buttons,
// images, dividers, spacers, social links and a footer — and renders it to the two
// template sources a message is rendered from: email-safe HTML (tables, inline
// styles, a hybrid layout with Outlook ghost tables) and a readable text part.
//
// It runs once, when the content is saved (or its layout edited), never per
// recipient: what it returns is parsed, bounded and rendered by the render
// package exactly as HTML content typed by hand. Text in blocks may hold template
// actions ({{.Name}}); the text around them is escaped here, and what the actions
// insert is escaped by html/template where it lands.
package blocks

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/markdown"
)

// Bounds of a design.
const (
	MaxBytes      = 256 << 10 // the JSON
	MaxRows       = 50
	MaxColumns    = 4 // per row
	MaxBlocks     = 200
	MaxText       = 10000 // bytes of one text field
	MaxURL        = 2048
	MaxSocial     = 10
	MinWidth      = 320
	MaxWidth      = 800
	DefaultWidth  = 600
	maxSpacer     = 200
	maxThickness  = 10
	minColumnPct  = 10
	pointerPrefix = "/blocks"
)

// Design is a block design.
type Design struct {
	// Width is the content width in pixels (MinWidth–MaxWidth; 0: DefaultWidth).
	Width int `json:"width,omitempty"`
	// Background is the colour around the content, ContentBackground the content's.
	Background        string `json:"background,omitempty"`
	ContentBackground string `json:"content_background,omitempty"`
	Rows              []Row  `json:"rows"`
	// Brand are the colours of the layout the design is framed in: the defaults
	// of what the design leaves unset. Not part of the JSON.
	Brand Brand `json:"-"`
}

// Brand are a layout's brand colours (#rrggbb, or empty for the renderer's own
// default): Primary a button's background, Background the colour around the
// content, Text the colour of headings and text, Link the colour of links.
type Brand struct {
	Primary, Background, Text, Link string
}

// Row is a row of columns, side by side on a wide screen and stacked on a narrow one.
type Row struct {
	Background string   `json:"background,omitempty"`
	Columns    []Column `json:"columns"`
}

// Column holds blocks. Width is its share of the row in percent: all of a row's
// columns give one (summing to 100) or none does (equal shares).
type Column struct {
	Width  int     `json:"width,omitempty"`
	Blocks []Block `json:"blocks"`
}

// Block is one block; which fields it takes depends on Type (see fields).
type Block struct {
	Type       string `json:"type"`
	Text       string `json:"text,omitempty"`
	Level      int    `json:"level,omitempty"`
	URL        string `json:"url,omitempty"`
	Src        string `json:"src,omitempty"`
	Alt        string `json:"alt,omitempty"`
	Width      int    `json:"width,omitempty"`
	Height     int    `json:"height,omitempty"`
	Align      string `json:"align,omitempty"`
	Color      string `json:"color,omitempty"`
	Background string `json:"background,omitempty"`
	// Unsubscribe is the footer's unsubscribe link text ("Unsubscribe" when empty).
	Unsubscribe string       `json:"unsubscribe,omitempty"`
	Links       []SocialLink `json:"links,omitempty"`
}

// SocialLink is one link of a social block.
type SocialLink struct {
	Network string `json:"network"`
	URL     string `json:"url"`
}

// fields are the fields each block type takes besides type; required ones first,
// up to the count in required.
var fields = map[string][]string{
	"heading": {"text", "level", "align", "color"},
	"text":    {"text", "align", "color"},
	"button":  {"text", "url", "align", "color", "background"},
	"image":   {"src", "alt", "url", "width", "align"},
	"divider": {"color", "height"},
	"spacer":  {"height"},
	"social":  {"links", "align"},
	"footer":  {"text", "unsubscribe", "align", "color"},
}

var required = map[string]int{"heading": 1, "text": 1, "button": 2, "image": 2, "social": 1}

// Networks are the networks a social link may name, with the label shown.
var Networks = map[string]string{
	"facebook": "Facebook", "x": "X", "instagram": "Instagram", "linkedin": "LinkedIn", "youtube": "YouTube",
	"tiktok": "TikTok", "mastodon": "Mastodon", "github": "GitHub", "bluesky": "Bluesky", "website": "Website",
}

var colour = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// Parse reads and checks a design. The error is a 422 naming the field under
// /blocks (a JSON pointer): an unknown block type or field, a bad URL or colour, a
// missing alt text, too many rows, columns or blocks, a size out of bounds.
func Parse(raw []byte) (Design, error) {
	if len(raw) > MaxBytes {
		return Design{}, invalid("", "the design is larger than %d bytes", MaxBytes)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return Design{}, invalid("", "is not JSON: %s", err.Error())
	}
	c := checker{}
	d := c.design(v)
	if c.err != nil {
		return Design{}, c.err
	}
	return d, nil
}

func invalid(ptr, format string, args ...any) error {
	return apperr.Invalidf(pointerPrefix+ptr, format, args...)
}

// checker walks the decoded JSON, building the design, and keeps the first error.
type checker struct {
	err    error
	blocks int
}

func (c *checker) fail(ptr, format string, args ...any) {
	if c.err == nil {
		c.err = invalid(ptr, format, args...)
	}
}

func (c *checker) object(v any, ptr string, allowed ...string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(ptr, "must be an object")
		return nil
	}
	for k := range m {
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			c.fail(ptr+"/"+k, "is not a field here (allowed: %s)", strings.Join(allowed, ", "))
		}
	}
	return m
}

func (c *checker) array(v any, ptr string, max int, what string) []any {
	a, ok := v.([]any)
	if !ok {
		c.fail(ptr, "must be an array")
		return nil
	}
	if len(a) > max {
		c.fail(ptr, "at most %d %s", max, what)
		return nil
	}
	return a
}

func (c *checker) str(m map[string]any, key, ptr string, max int) string {
	v, ok := m[key]
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		c.fail(ptr+"/"+key, "must be a string")
		return ""
	}
	if len(s) > max {
		c.fail(ptr+"/"+key, "is longer than %d bytes", max)
	}
	return s
}

func (c *checker) integer(m map[string]any, key, ptr string, lo, hi int) int {
	v, ok := m[key]
	if !ok {
		return 0
	}
	n, ok := v.(json.Number)
	i, err := strconv.Atoi(string(n))
	if !ok || err != nil || i < lo || i > hi {
		c.fail(ptr+"/"+key, "must be a whole number from %d to %d", lo, hi)
		return 0
	}
	return i
}

func (c *checker) colour(m map[string]any, key, ptr string) string {
	s := c.str(m, key, ptr, 7)
	if s != "" && !colour.MatchString(s) {
		c.fail(ptr+"/"+key, "must be a colour written #rgb or #rrggbb")
	}
	return s
}

func (c *checker) design(v any) Design {
	m := c.object(v, "", "width", "background", "content_background", "rows")
	if m == nil {
		return Design{}
	}
	d := Design{Width: c.integer(m, "width", "", MinWidth, MaxWidth),
		Background: c.colour(m, "background", ""), ContentBackground: c.colour(m, "content_background", "")}
	rows, ok := m["rows"]
	if !ok {
		c.fail("/rows", "is required")
		return d
	}
	for i, r := range c.array(rows, "/rows", MaxRows, "rows") {
		d.Rows = append(d.Rows, c.row(r, "/rows/"+strconv.Itoa(i)))
	}
	if c.err == nil && c.blocks == 0 {
		c.fail("/rows", "the design has no block")
	}
	return d
}

func (c *checker) row(v any, ptr string) Row {
	m := c.object(v, ptr, "background", "columns")
	if m == nil {
		return Row{}
	}
	r := Row{Background: c.colour(m, "background", ptr)}
	cols := c.array(m["columns"], ptr+"/columns", MaxColumns, "columns")
	if len(cols) == 0 {
		c.fail(ptr+"/columns", "a row needs 1 to %d columns", MaxColumns)
	}
	sum, given := 0, 0
	for i, cv := range cols {
		cp := ptr + "/columns/" + strconv.Itoa(i)
		cm := c.object(cv, cp, "width", "blocks")
		if cm == nil {
			continue
		}
		col := Column{Width: c.integer(cm, "width", cp, minColumnPct, 100)}
		if col.Width > 0 {
			sum += col.Width
			given++
		}
		for j, bv := range c.array(cm["blocks"], cp+"/blocks", MaxBlocks, "blocks") {
			col.Blocks = append(col.Blocks, c.block(bv, cp+"/blocks/"+strconv.Itoa(j)))
		}
		r.Columns = append(r.Columns, col)
	}
	if given > 0 && (given != len(cols) || sum != 100) {
		c.fail(ptr+"/columns", "either every column gives its width in percent, summing to 100, or none does")
	}
	return r
}

func (c *checker) block(v any, ptr string) Block {
	c.blocks++
	if c.blocks > MaxBlocks {
		c.fail(ptr, "a design has at most %d blocks", MaxBlocks)
		return Block{}
	}
	m, ok := v.(map[string]any)
	if !ok {
		c.fail(ptr, "must be an object")
		return Block{}
	}
	typ, _ := m["type"].(string)
	fs, ok := fields[typ]
	if !ok {
		c.fail(ptr+"/type", "unknown block type %q (heading, text, button, image, divider, spacer, social, footer)", typ)
		return Block{}
	}
	c.object(m, ptr, append([]string{"type"}, fs...)...)
	for _, f := range fs[:required[typ]] {
		if s, isString := m[f].(string); m[f] == nil || (isString && strings.TrimSpace(s) == "") {
			c.fail(ptr+"/"+f, "the %s block needs %s", typ, f)
		}
	}
	b := Block{Type: typ,
		Text:        c.text(m, "text", ptr),
		Unsubscribe: c.text(m, "unsubscribe", ptr),
		Alt:         c.text(m, "alt", ptr),
		Align:       c.str(m, "align", ptr, 6),
		Color:       c.colour(m, "color", ptr),
		Background:  c.colour(m, "background", ptr),
		URL:         c.url(m, "url", ptr, false),
		Src:         c.url(m, "src", ptr, true),
	}
	switch b.Align {
	case "", "left", "center", "right":
	default:
		c.fail(ptr+"/align", "must be left, center or right")
	}
	switch typ {
	case "heading":
		b.Level = c.integer(m, "level", ptr, 1, 3)
	case "image":
		b.Width = c.integer(m, "width", ptr, 16, MaxWidth)
	case "divider":
		b.Height = c.integer(m, "height", ptr, 1, maxThickness)
	case "spacer":
		b.Height = c.integer(m, "height", ptr, 4, maxSpacer)
	case "social":
		for i, lv := range c.array(m["links"], ptr+"/links", MaxSocial, "links") {
			lp := ptr + "/links/" + strconv.Itoa(i)
			lm := c.object(lv, lp, "network", "url")
			if lm == nil {
				continue
			}
			l := SocialLink{Network: c.str(lm, "network", lp, 20), URL: c.url(lm, "url", lp, false)}
			if _, ok := Networks[l.Network]; !ok {
				c.fail(lp+"/network", "unknown network %q", l.Network)
			}
			if l.URL == "" {
				c.fail(lp+"/url", "a social link needs url")
			}
			b.Links = append(b.Links, l)
		}
	}
	return b
}

// text reads a text field whose template actions must be closed.
func (c *checker) text(m map[string]any, key, ptr string) string {
	s := c.str(m, key, ptr, MaxText)
	if _, err := markdown.Split(s); err != nil {
		c.fail(ptr+"/"+key, "%s", err.Error())
	}
	return s
}

// url reads a link or image address: absolute http(s) (an image), or also mailto:
// and tel: (a link), or starting with a template action ({{.UnsubscribeURL}},
// {{.Attributes.link}}), whose value html/template filters when it renders.
func (c *checker) url(m map[string]any, key, ptr string, image bool) string {
	s := c.str(m, key, ptr, MaxURL)
	if s == "" {
		return ""
	}
	parts, err := markdown.Split(s)
	if err != nil {
		c.fail(ptr+"/"+key, "%s", err.Error())
		return ""
	}
	if parts[0] == "" && len(parts) > 1 {
		return s // starts with an action
	}
	var lit strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			lit.WriteString(p)
		} else {
			lit.WriteString("x")
		}
	}
	u, err := url.Parse(lit.String())
	ok := err == nil && strings.TrimSpace(s) == s
	if ok {
		switch strings.ToLower(u.Scheme) {
		case "https", "http":
			ok = u.Host != ""
		case "mailto", "tel":
			ok = !image && u.Opaque != ""
		default:
			ok = false
		}
	}
	if !ok {
		if image {
			c.fail(ptr+"/"+key, "must be an absolute http or https URL")
		} else {
			c.fail(ptr+"/"+key, "must be an absolute http, https, mailto or tel URL, or start with a template action")
		}
	}
	return s
}

// Convert parses raw and renders it: the HTML and text template sources.
func Convert(raw []byte) (htmlSrc, textSrc string, err error) {
	return ConvertBrand(raw, Brand{})
}

// ConvertBrand is Convert with brand's colours as the defaults of the design's.
func ConvertBrand(raw []byte, brand Brand) (htmlSrc, textSrc string, err error) {
	d, err := Parse(raw)
	if err != nil {
		return "", "", err
	}
	d.Brand = brand
	htmlSrc, textSrc = Render(d)
	return htmlSrc, textSrc, nil
}
