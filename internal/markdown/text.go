package markdown

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/util"
)

// renderText writes the text part from the Markdown's tree, not from the HTML:
// headings underlined, list markers and numbers kept, links as "text (url)", table
// columns aligned, code indented, raw HTML reduced to its text.
func renderText(doc ast.Node, source []byte) string {
	var b strings.Builder
	blocks(&b, doc, source, "")
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// blocks writes the block children of n, separated by blank lines, each line
// starting with indent.
func blocks(b *strings.Builder, n ast.Node, source []byte, indent string) {
	first := true
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if !first {
			b.WriteString(strings.TrimRight(indent, " ") + "\n")
		}
		first = false
		block(b, c, source, indent)
	}
}

func writeLines(b *strings.Builder, s, indent string) {
	for _, l := range strings.Split(s, "\n") {
		b.WriteString(strings.TrimRight(indent+l, " ") + "\n")
	}
}

func block(b *strings.Builder, n ast.Node, source []byte, indent string) {
	switch n := n.(type) {
	case *ast.Heading:
		t := inlines(n, source)
		writeLines(b, t, indent)
		switch n.Level {
		case 1:
			writeLines(b, strings.Repeat("=", width(t)), indent)
		case 2:
			writeLines(b, strings.Repeat("-", width(t)), indent)
		}
	case *ast.Paragraph, *ast.TextBlock:
		writeLines(b, inlines(n, source), indent)
	case *ast.ThematicBreak:
		writeLines(b, "----", indent)
	case *ast.Blockquote:
		blocks(b, n, source, indent+"> ")
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.WriteString(strings.TrimRight(indent+"    "+strings.TrimRight(string(seg.Value(source)), "\n"), " ") + "\n")
		}
	case *ast.List:
		num := n.Start
		for item := n.FirstChild(); item != nil; item = item.NextSibling() {
			marker := "- "
			if n.IsOrdered() {
				marker = strconv.Itoa(num) + ". "
				num++
			}
			var sub strings.Builder
			if n.IsTight {
				for c := item.FirstChild(); c != nil; c = c.NextSibling() {
					block(&sub, c, source, "")
				}
			} else {
				blocks(&sub, item, source, "")
			}
			pad := strings.Repeat(" ", len(marker))
			for i, l := range strings.Split(strings.TrimRight(sub.String(), "\n"), "\n") {
				if i == 0 {
					b.WriteString(strings.TrimRight(indent+marker+l, " ") + "\n")
				} else {
					b.WriteString(strings.TrimRight(indent+pad+l, " ") + "\n")
				}
			}
		}
	case *ast.HTMLBlock:
		var raw strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			raw.Write(seg.Value(source))
		}
		if n.HasClosure() {
			raw.Write(n.ClosureLine.Value(source))
		}
		if t := stripTags(raw.String()); t != "" {
			writeLines(b, t, indent)
		}
	case *east.Table:
		table(b, n, source, indent)
	default:
		if n.Type() == ast.TypeBlock && n.HasChildren() {
			blocks(b, n, source, indent)
		}
	}
}

// table writes a table with its columns padded to the widest cell and a rule
// under the header.
func table(b *strings.Builder, t *east.Table, source []byte, indent string) {
	var rows [][]string
	var widths []int
	for r := t.FirstChild(); r != nil; r = r.NextSibling() {
		var row []string
		for i, c := 0, r.FirstChild(); c != nil; i, c = i+1, c.NextSibling() {
			s := strings.ReplaceAll(inlines(c, source), "\n", " ")
			row = append(row, s)
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], width(s))
		}
		rows = append(rows, row)
	}
	for ri, row := range rows {
		var line strings.Builder
		for i, s := range row {
			if i > 0 {
				line.WriteString(" | ")
			}
			line.WriteString(s + strings.Repeat(" ", widths[i]-width(s)))
		}
		writeLines(b, line.String(), indent)
		if ri == 0 {
			var rule []string
			for _, w := range widths {
				rule = append(rule, strings.Repeat("-", w))
			}
			writeLines(b, strings.Join(rule, "-|-"), indent)
		}
	}
}

// inlines returns the text of n's inline children.
func inlines(n ast.Node, source []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		inline(&b, c, source)
	}
	return strings.TrimSpace(b.String())
}

func inline(b *strings.Builder, n ast.Node, source []byte) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(source)
		if !n.IsRaw() {
			v = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(v)))
		}
		b.Write(v)
		if n.HardLineBreak() || n.SoftLineBreak() {
			b.WriteString("\n")
		}
	case *ast.String:
		b.Write(n.Value)
	case *ast.CodeSpan:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Segment.Value(source))
			} else if s, ok := c.(*ast.String); ok {
				b.Write(s.Value)
			}
		}
	case *ast.Link:
		label := inlines(n, source)
		dest := string(n.Destination)
		b.WriteString(label)
		if dest != "" && dest != label {
			b.WriteString(" (" + dest + ")")
		}
	case *ast.AutoLink:
		b.Write(n.URL(source))
	case *ast.Image:
		b.WriteString(inlines(n, source))
	case *ast.RawHTML:
		var raw strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			raw.Write(seg.Value(source))
		}
		if t := strings.ToLower(raw.String()); strings.HasPrefix(t, "<br") {
			b.WriteString("\n")
		}
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			inline(b, c, source)
		}
	}
}

// stripTags returns the text of an HTML block: tags and comments dropped, lines
// trimmed, blank lines collapsed.
func stripTags(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		end := ">"
		if strings.HasPrefix(s[i:], "<!--") {
			end = "-->"
		}
		j := strings.Index(s[i:], end)
		if j < 0 {
			break
		}
		s = s[i+j+len(end):]
	}
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, string(util.ResolveEntityNames(util.ResolveNumericReferences([]byte(l)))))
		}
	}
	return strings.Join(out, "\n")
}

func width(s string) int { return utf8.RuneCountInString(s) }
