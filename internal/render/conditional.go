package render

import (
	htmltemplate "html/template"
	"regexp"
	"strconv"
	"strings"
	"text/template/parse"
)

// Outlook's conditional comments (<!--[if mso]> … <![endif]-->) hold the fixed-width
// "ghost" tables that give Outlook for Windows, which ignores max-width, the layout
// other clients take from CSS. html/template drops every HTML comment, so before an
// HTML template is parsed each opening and closing of a conditional comment is
// swapped for a placeholder of letters and digits that occurs nowhere in it, and
// put back in the escaped template's text (never in the output, where a
// recipient's data could spell a placeholder). What a conditional comment encloses
// is parsed and escaped as any other template text.
var (
	conditionalOpen  = regexp.MustCompile(`<!--\[if [^\]<>]{1,60}\]>(?:<!-->)?`)
	conditionalClose = regexp.MustCompile(`(?:<!--)?<!\[endif\]-->`)
)

// conditionals are an HTML template's conditional comments and their placeholder.
type conditionals struct {
	prefix   string
	comments []string
}

// protectConditionals returns html with its conditional comments swapped for
// placeholders (prefix, index, 'z'), or nil when it has none.
func protectConditionals(html string) (string, *conditionals) {
	if !strings.Contains(html, "<!--[if ") && !strings.Contains(html, "<![endif]-->") {
		return html, nil
	}
	c := &conditionals{prefix: "sendoncecc"}
	for strings.Contains(html, c.prefix) {
		c.prefix += "q"
	}
	swap := func(m string) string {
		c.comments = append(c.comments, m)
		return c.prefix + strconv.Itoa(len(c.comments)-1) + "z"
	}
	html = conditionalOpen.ReplaceAllStringFunc(html, swap)
	html = conditionalClose.ReplaceAllStringFunc(html, swap)
	if len(c.comments) == 0 {
		return html, nil
	}
	return html, c
}

// restore puts the comments back in s, template text (never output).
func (c *conditionals) restore(s string) string {
	if c == nil || !strings.Contains(s, c.prefix) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, c.prefix)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(c.prefix)
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		n, err := strconv.Atoi(s[j:k])
		if err != nil || k >= len(s) || s[k] != 'z' || n >= len(c.comments) {
			b.WriteString(s[:j])
			s = s[j:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(c.comments[n])
		s = s[k+1:]
	}
}

// restoreTree puts the comments back in the text of t's escaped templates.
func (c *conditionals) restoreTree(t *htmltemplate.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		walk(tt.Tree.Root, func(n parse.Node, _ int) {
			if tn, ok := n.(*parse.TextNode); ok {
				tn.Text = []byte(c.restore(string(tn.Text)))
			}
		})
	}
}
