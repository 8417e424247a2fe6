package blocks

import (
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sendonce/sendonce/internal/markdown"
)

// The renderer follows MJML 4's output for the same structure (mj-section,
// mj-column, mj-text, mj-button, mj-image, mj-divider, mj-spacer): see
// docs/content.md#blocks for the rules kept and the ones left out.
const (
	fontStack      = "Helvetica,Arial,sans-serif"
	blockPadX      = 25 // px left and right of every block, MJML's default
	defaultText    = "#222222"
	defaultButton  = "#1a56db"
	defaultOnBtn   = "#ffffff"
	defaultDivider = "#d0d5dd"
	defaultFooter  = "#555555"
	defaultSpacer  = 20
)

var headingSize = [4]int{0, 28, 22, 18}

// Render returns the HTML and text template sources of d (checked by Parse).
func Render(d Design) (htmlSrc, textSrc string) {
	w := d.Width
	if w == 0 {
		w = DefaultWidth
	}
	var h, t strings.Builder
	outer := "margin:0;padding:0"
	if bg := or(d.Background, d.Brand.Background); bg != "" {
		outer += ";background-color:" + bg
	}
	inner := "margin:0px auto;max-width:" + px(w)
	if d.ContentBackground != "" {
		inner += ";background-color:" + d.ContentBackground
	}
	h.WriteString(`<div style="` + outer + `">` + "\n")
	// Outlook for Windows ignores max-width: a fixed-width ghost table centres the content there.
	h.WriteString(`<!--[if mso | IE]><table align="center" border="0" cellpadding="0" cellspacing="0" role="presentation" style="width:` + px(w) + `" width="` + strconv.Itoa(w) + `"><tr><td><![endif]-->` + "\n")
	h.WriteString(`<div style="` + inner + `">` + "\n")
	for _, r := range d.Rows {
		row(&h, &t, r, w, d.Brand)
	}
	h.WriteString("</div>\n<!--[if mso | IE]></td></tr></table><![endif]-->\n</div>\n")
	return mergeConditionals(h.String()), strings.TrimRight(t.String(), "\n") + "\n"
}

// mergeConditionals joins conditional comments that follow one another into one,
// as MJML does to its output (mergeOutlookConditionnals): what Outlook reads is the
// same markup, and the other clients skip one comment instead of several.
func mergeConditionals(h string) string {
	return strings.ReplaceAll(h, "<![endif]-->\n<!--[if mso | IE]>", "")
}

func px(n int) string { return strconv.Itoa(n) + "px" }

// or is s, or def when s is empty.
func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// row writes a section: a full-width table whose cell holds the columns as
// inline blocks (side by side while the content is wide enough, stacked when
// not, with no media query: Gmail's apps for other accounts read none), and, for
// Outlook, a ghost table giving each column its fixed width.
func row(h, t *strings.Builder, r Row, width int, brand Brand) {
	style := "width:100%"
	if r.Background != "" {
		style += ";background-color:" + r.Background
	}
	h.WriteString(`<table align="center" border="0" cellpadding="0" cellspacing="0" role="presentation" style="` + style + `"><tbody><tr><td style="direction:ltr;font-size:0px;padding:10px 0;text-align:center">` + "\n")
	widths := columnWidths(r, width)
	h.WriteString(`<!--[if mso | IE]><table role="presentation" border="0" cellpadding="0" cellspacing="0"><tr><![endif]-->` + "\n")
	for i, c := range r.Columns {
		cw := widths[i]
		h.WriteString(`<!--[if mso | IE]><td style="vertical-align:top;width:` + px(cw) + `" width="` + strconv.Itoa(cw) + `"><![endif]-->` + "\n")
		h.WriteString(`<div style="font-size:0px;text-align:left;direction:ltr;display:inline-block;vertical-align:top;width:100%;max-width:` + px(cw) + `">` + "\n")
		h.WriteString(`<table border="0" cellpadding="0" cellspacing="0" role="presentation" style="vertical-align:top" width="100%"><tbody>` + "\n")
		for _, b := range c.Blocks {
			block(h, t, b, cw-2*blockPadX, brand)
		}
		h.WriteString("</tbody></table>\n</div>\n<!--[if mso | IE]></td><![endif]-->\n")
	}
	h.WriteString("<!--[if mso | IE]></tr></table><![endif]-->\n</td></tr></tbody></table>\n")
}

// columnWidths are the columns' widths in pixels.
func columnWidths(r Row, width int) []int {
	out := make([]int, len(r.Columns))
	for i, c := range r.Columns {
		if c.Width > 0 {
			out[i] = width * c.Width / 100
		} else {
			out[i] = width / len(r.Columns)
		}
	}
	return out
}

// block writes one block as a table row, and its text; brand's colours are the
// defaults of those b leaves unset.
func block(h, t *strings.Builder, b Block, inner int, brand Brand) {
	text, button, link := or(brand.Text, defaultText), or(brand.Primary, defaultButton), or(brand.Link, defaultText)
	align := b.Align
	if align == "" {
		align = "left"
		if b.Type == "button" || b.Type == "social" || b.Type == "footer" {
			align = "center"
		}
	}
	pad := "10px " + px(blockPadX)
	if b.Type == "spacer" {
		pad = "0px"
	}
	h.WriteString(`<tr><td align="` + align + `" style="font-size:0px;padding:` + pad + `;word-break:break-word">`)
	color := func(def string) string {
		if b.Color != "" {
			return b.Color
		}
		return def
	}
	textStyle := func(size int, c string) string {
		return "font-family:" + fontStack + ";font-size:" + px(size) + ";line-height:1.5;text-align:" + align + ";color:" + c
	}
	switch b.Type {
	case "heading":
		level := max(b.Level, 1)
		tag := "h" + strconv.Itoa(level)
		h.WriteString("<" + tag + ` style="margin:0;font-family:` + fontStack + ";font-size:" + px(headingSize[level]) + ";line-height:1.25;font-weight:bold;text-align:" + align + ";color:" + color(text) + `">`)
		h.WriteString(inline(b.Text))
		h.WriteString("</" + tag + ">")
		rule := "="
		if level > 1 {
			rule = "-"
		}
		t.WriteString(b.Text + "\n" + strings.Repeat(rule, min(max(utf8.RuneCountInString(b.Text), 3), 72)) + "\n\n")
	case "text":
		h.WriteString(`<div style="` + textStyle(16, color(text)) + `">`)
		h.WriteString(paragraphs(b.Text))
		h.WriteString("</div>")
		t.WriteString(strings.TrimSpace(b.Text) + "\n\n")
	case "button":
		bg := or(b.Background, button)
		h.WriteString(`<table border="0" cellpadding="0" cellspacing="0" role="presentation" style="border-collapse:separate;line-height:100%"><tr>`)
		h.WriteString(`<td align="center" bgcolor="` + bg + `" role="presentation" style="border:none;border-radius:4px;mso-padding-alt:12px 24px;background:` + bg + `" valign="middle">`)
		h.WriteString(`<a href="` + attr(b.URL) + `" style="display:inline-block;background:` + bg + ";color:" + color(defaultOnBtn) + ";font-family:" + fontStack + `;font-size:16px;font-weight:bold;line-height:120%;margin:0;text-decoration:none;padding:12px 24px;mso-padding-alt:0px;border-radius:4px" target="_blank">`)
		h.WriteString(inline(b.Text))
		h.WriteString("</a></td></tr></table>")
		t.WriteString(b.Text + ": " + b.URL + "\n\n")
	case "image":
		w := inner
		if b.Width > 0 && b.Width < w {
			w = b.Width
		}
		h.WriteString(`<table border="0" cellpadding="0" cellspacing="0" role="presentation" style="border-collapse:collapse;border-spacing:0px"><tbody><tr><td style="width:` + px(w) + `">`)
		img := `<img alt="` + attr(b.Alt) + `" src="` + attr(b.Src) + `" width="` + strconv.Itoa(w) + `" height="auto" style="border:0;display:block;outline:none;text-decoration:none;height:auto;width:100%;max-width:` + px(w) + `;font-size:13px">`
		if b.URL != "" {
			h.WriteString(`<a href="` + attr(b.URL) + `" target="_blank">` + img + "</a>")
			t.WriteString(b.Alt + ": " + b.URL + "\n\n")
		} else {
			h.WriteString(img)
		}
		h.WriteString("</td></tr></tbody></table>")
	case "divider":
		thick := max(b.Height, 1)
		border := "border-top:solid " + px(thick) + " " + color(defaultDivider)
		h.WriteString(`<p style="` + border + `;font-size:1px;margin:0px auto;width:100%"></p>`)
		// Outlook draws an empty paragraph's border at the wrong width: MJML's table for it.
		h.WriteString(`<!--[if mso | IE]><table align="center" border="0" cellpadding="0" cellspacing="0" style="` + border + `;font-size:1px;margin:0px;width:` + px(inner) + `" role="presentation" width="` + strconv.Itoa(inner) + `"><tr><td style="height:0;line-height:0">&nbsp;</td></tr></table><![endif]-->`)
		t.WriteString(strings.Repeat("-", 40) + "\n\n")
	case "spacer":
		height := b.Height
		if height == 0 {
			height = defaultSpacer
		}
		h.WriteString(`<div style="height:` + px(height) + ";line-height:" + px(height) + `">&#8202;</div>`)
	case "social":
		h.WriteString(`<div style="` + textStyle(14, color(text)) + `">`)
		for i, l := range b.Links {
			if i > 0 {
				h.WriteString(` <span aria-hidden="true">&middot;</span> `)
			}
			h.WriteString(`<a href="` + attr(l.URL) + `" style="color:` + color(link) + `;text-decoration:underline" target="_blank">` + Networks[l.Network] + "</a>")
			t.WriteString(Networks[l.Network] + ": " + l.URL + "\n")
		}
		h.WriteString("</div>")
		t.WriteString("\n")
	case "footer":
		label := b.Unsubscribe
		if strings.TrimSpace(label) == "" {
			label = "Unsubscribe"
		}
		h.WriteString(`<div style="` + textStyle(12, color(defaultFooter)) + `">`)
		if b.Text != "" {
			h.WriteString(paragraphs(b.Text))
		}
		h.WriteString(`<p style="margin:0"><a href="{{.UnsubscribeURL}}" style="color:` + color(or(brand.Link, defaultFooter)) + `;text-decoration:underline">` + inline(label) + "</a></p></div>")
		if b.Text != "" {
			t.WriteString(strings.TrimSpace(b.Text) + "\n\n")
		}
		t.WriteString(label + ": {{.UnsubscribeURL}}\n\n")
	}
	h.WriteString("</td></tr>\n")
}

// escaped returns s with the text around its template actions escaped for HTML
// (attribute values included) and each run of it passed through f; the actions are
// kept, for html/template to escape what they insert.
func escaped(s string, f func(string) string) string {
	parts, err := markdown.Split(s)
	if err != nil { // Parse refused it
		return f(html.EscapeString(s))
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			b.WriteString(f(html.EscapeString(p)))
		} else {
			b.WriteString(p)
		}
	}
	return b.String()
}

func attr(s string) string { return escaped(s, func(s string) string { return s }) }

var breaks = strings.NewReplacer("\r\n", "<br>", "\n", "<br>")

// inline is one line of text: newlines break it.
func inline(s string) string { return escaped(strings.TrimSpace(s), breaks.Replace) }

var blankLines = regexp.MustCompile(`\n[ \t]*\n\s*`)

// paragraphs makes a paragraph of every run of text between blank lines.
func paragraphs(s string) string {
	const open = `<p style="margin:0 0 12px 0">`
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	return open + escaped(s, func(p string) string {
		return breaks.Replace(blankLines.ReplaceAllString(p, "</p>"+open))
	}) + "</p>"
}
