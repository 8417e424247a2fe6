// Package markdown turns an account's Markdown (CommonMark with GFM tables and
// strikethrough) into the two template sources a message is rendered from: an HTML
// template and a readable text template. It runs once, when the content is saved
// (or its layout edited), never per recipient: what it returns is parsed, bounded
// and rendered by the render package exactly as HTML content typed by hand, so a
// Markdown campaign costs each message what an HTML one does.
//
// Go template actions ({{.Name}}, {{.Attributes.plan | printf "%q"}}, {{if …}}) work
// inside Markdown. Markdown would otherwise read their quotes, pipes, underscores
// and asterisks as its own syntax, so each action is swapped for an opaque
// placeholder of letters and digits before conversion and put back after it.
// Raw HTML is kept, as in HTML content: the author writes their own mail, and the
// data actions insert is escaped by html/template where it lands.
package markdown

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
)

// MaxBytes is the largest Markdown source accepted, the bound of HTML content.
const MaxBytes = 512 << 10

var md = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough),
	goldmark.WithRendererOptions(html.WithUnsafe()),
)

// Converted is the output of Convert: template sources, still holding the actions.
type Converted struct {
	HTML, Text string
}

// Convert converts src. The error names an action that is never closed.
func Convert(src string) (Converted, error) {
	if len(src) > MaxBytes {
		return Converted{}, fmt.Errorf("is longer than %d bytes", MaxBytes)
	}
	p, err := protect(src)
	if err != nil {
		return Converted{}, err
	}
	source := []byte(p.src)
	doc := md.Parser().Parse(text.NewReader(source), parser.WithContext(parser.NewContext()))
	var h bytes.Buffer
	if err := md.Renderer().Render(&h, source, doc); err != nil {
		return Converted{}, err
	}
	t := renderText(doc, source)
	return Converted{HTML: p.restore(unwrapLone(p, h.String())), Text: p.restore(t)}, nil
}

// protected is a source whose actions were replaced by placeholders: prefix, the
// action's index in decimal, then 'z' (so 1 is never read as the start of 10).
type protected struct {
	src     string
	prefix  string
	actions []string
}

// protect replaces every {{ … }} action of src. The prefix is made of letters only
// and chosen so that it occurs nowhere in src: no text of the author's can be taken
// for a placeholder. An action ends at the first "}}" outside a quoted string, raw
// string, character constant or comment, as text/template reads it.
func protect(src string) (protected, error) {
	prefix := "mdact"
	for strings.Contains(src, prefix) {
		prefix += "q"
	}
	p := protected{prefix: prefix}
	var b strings.Builder
	rest := src
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		end := actionEnd(rest[i+2:])
		if end < 0 {
			line := 1 + strings.Count(src[:len(src)-len(rest)+i], "\n")
			return protected{}, fmt.Errorf("line %d: an action {{ is not closed by }}", line)
		}
		b.WriteString(rest[:i])
		action := rest[i : i+2+end+2]
		b.WriteString(prefix + strconv.Itoa(len(p.actions)) + "z")
		p.actions = append(p.actions, action)
		rest = rest[i+2+end+2:]
	}
	p.src = b.String()
	return p, nil
}

// actionEnd returns the offset of the "}}" that closes an action whose body is s.
func actionEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '}' && i+1 < len(s) && s[i+1] == '}':
			return i
		case c == '"' || c == '\'':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case c == '`':
			for i++; i < len(s) && s[i] != '`'; i++ {
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return -1
			}
			i += 2 + j + 1
		}
	}
	return -1
}

// restore puts the actions back in place of their placeholders.
func (p protected) restore(s string) string {
	if len(p.actions) == 0 {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, p.prefix)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(p.prefix)
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		n, err := strconv.Atoi(s[j:k])
		if err != nil || k >= len(s) || s[k] != 'z' || n >= len(p.actions) {
			b.WriteString(s[:j])
			s = s[j:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(p.actions[n])
		s = s[k+1:]
	}
}

// unwrapLone drops the paragraph Markdown puts around an action alone on its line
// ({{if …}}, {{end}}, {{range …}}): it is control flow, not a paragraph of text.
// A field ({{.Name}}) alone on its line stays a paragraph.
func unwrapLone(p protected, h string) string {
	if len(p.actions) == 0 {
		return h
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(h, "\n") {
		body := strings.TrimSuffix(line, "\n")
		if inner, ok := strings.CutPrefix(body, "<p>"); ok {
			if inner, ok = strings.CutSuffix(inner, "</p>"); ok && onlyPlaceholders(p, inner) {
				b.WriteString(inner + line[len(body):])
				continue
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

// control reports whether an action is control flow or a comment, which prints
// nothing of its own.
func control(action string) bool {
	a := strings.TrimLeft(strings.TrimPrefix(action, "{{"), "- \t\n")
	for _, k := range []string{"if ", "else", "end", "range ", "with ", "break", "continue", "/*"} {
		if strings.HasPrefix(a, k) {
			return true
		}
	}
	return false
}

func onlyPlaceholders(p protected, s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for s != "" {
		rest, ok := strings.CutPrefix(s, p.prefix)
		if !ok {
			return false
		}
		k := 0
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k == 0 || k >= len(rest) || rest[k] != 'z' {
			return false
		}
		if n, err := strconv.Atoi(rest[:k]); err != nil || n >= len(p.actions) || !control(p.actions[n]) {
			return false
		}
		s = strings.TrimSpace(rest[k+1:])
	}
	return true
}

// Split cuts src into literal text and {{ … }} actions, in order: the even
// elements are text (possibly empty), the odd ones actions, as text/template reads
// them. The error names an action that is never closed.
func Split(src string) ([]string, error) {
	var out []string
	rest := src
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			return append(out, rest), nil
		}
		end := actionEnd(rest[i+2:])
		if end < 0 {
			return nil, fmt.Errorf("an action {{ is not closed by }}")
		}
		out = append(out, rest[:i], rest[i:i+2+end+2])
		rest = rest[i+2+end+2:]
	}
}
