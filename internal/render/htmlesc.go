package render

// The escapers html/template inserts most often, for the values a template can see
// (strings, numbers, booleans, maps and slices decoded from JSON; never html/template's
// typed content), ported from Go's html/template (html.go, url.go; BSD licence,
// Copyright The Go Authors) so a plain HTML part renders without reflection.
// FuzzPlainHTMLMatchesHTMLTemplate holds them to html/template's output.

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// escapers maps html/template's escaper names to their ports.
var escapers = map[string]func(string) string{
	"_html_template_htmlescaper":   htmlEscape,
	"_html_template_attrescaper":   htmlEscape, // the same for plain (untyped) content
	"_html_template_urlfilter":     urlFilter,
	"_html_template_urlnormalizer": func(s string) string { return urlProcess(s, true) },
	"_html_template_urlescaper":    func(s string) string { return urlProcess(s, false) },
}

// stringify is html/template's for one argument of plain content: a string as is,
// nil as nothing, anything else as fmt.Sprint prints it.
func stringify(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// htmlReplacement is html/template's htmlReplacementTable.
var htmlReplacement = [...]string{
	0:    "\uFFFD",
	'"':  "&#34;",
	'&':  "&amp;",
	'\'': "&#39;",
	'+':  "&#43;",
	'<':  "&lt;",
	'>':  "&gt;",
}

// htmlEscape is html/template's htmlReplacer(s, htmlReplacementTable, true).
func htmlEscape(s string) string {
	var b strings.Builder
	written := 0
	for i, w := 0, 0; i < len(s); i += w {
		var r rune
		r, w = utf8.DecodeRuneInString(s[i:])
		if int(r) < len(htmlReplacement) {
			if repl := htmlReplacement[r]; repl != "" {
				if written == 0 {
					b.Grow(len(s) + 16)
				}
				b.WriteString(s[written:i])
				b.WriteString(repl)
				written = i + w
			}
		}
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

// urlFilter is html/template's: a URL with a scheme other than http, https or
// mailto becomes "#ZgotmplZ".
func urlFilter(s string) string {
	if protocol, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(protocol, "/") {
		if !strings.EqualFold(protocol, "http") && !strings.EqualFold(protocol, "https") && !strings.EqualFold(protocol, "mailto") {
			return "#ZgotmplZ"
		}
	}
	return s
}

// urlProcess is html/template's urlProcessor: it normalizes (norm) or escapes s
// as a URL part, percent-encoding what RFC 3986 does not allow there.
func urlProcess(s string, norm bool) string {
	var b strings.Builder
	written := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '!', '#', '$', '&', '*', '+', ',', '/', ':', ';', '=', '?', '@', '[', ']':
			if norm {
				continue
			}
		case '-', '.', '_', '~':
			continue
		case '%':
			if norm && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				continue
			}
		default:
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				continue
			}
		}
		if written == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[written:i])
		b.WriteByte('%')
		b.WriteByte("0123456789abcdef"[c>>4])
		b.WriteByte("0123456789abcdef"[c&0xf])
		written = i + 1
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
