package message

import (
	"html"
	"net/url"
	"strings"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// MaxTrackedLinks bounds the links of one campaign that are tracked; the links
// after it are left as they are.
const MaxTrackedLinks = 1000

// maxTrackedURL is the longest URL that is tracked (tracked_links.url).
const maxTrackedURL = 2048

// TrackableLinks returns the distinct URLs a campaign's HTML template writes
// literally in the href of an <a> or <area>, in order of first appearance: the
// links click tracking rewrites, numbered from 1. Only absolute http(s) URLs are
// taken. A URL with a template action in it ({{…}}: personal, different per
// recipient) is not, so the stored URLs are the campaign's and never a
// recipient's; neither are mailto:, tel:, fragments (#top) nor the unsubscribe
// and preference links, which are always {{.UnsubscribeURL}}. The approval stores
// this list and the executor rewrites by it: both read the same frozen template.
func TrackableLinks(htmlTemplate string) []string {
	var out []string
	seen := map[string]bool{}
	z := xhtml.NewTokenizer(strings.NewReader(htmlTemplate))
	for len(out) < MaxTrackedLinks {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		if tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken {
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr || !isLinkTag(name) {
			continue
		}
		for more := true; more; {
			var k, v []byte
			k, v, more = z.TagAttr()
			if string(k) == "href" {
				u := strings.TrimSpace(string(v))
				if trackable(u) && !seen[u] {
					seen[u] = true
					out = append(out, u)
				}
				break
			}
		}
	}
	return out
}

func isLinkTag(name []byte) bool {
	a := atom.Lookup(name)
	return a == atom.A || a == atom.Area
}

// trackable reports whether a literal href is one click tracking rewrites.
func trackable(u string) bool {
	if u == "" || len(u) > maxTrackedURL || strings.Contains(u, "{{") || strings.ContainsAny(u, " \t\r\n") {
		return false
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	s := strings.ToLower(p.Scheme)
	return s == "http" || s == "https"
}

func linkIndex(urls []string) map[string]int {
	if len(urls) == 0 {
		return nil
	}
	m := make(map[string]int, len(urls))
	for i, u := range urls {
		m[u] = i + 1
	}
	return m
}

// NumLinks is the number of the campaign's tracked links.
func (p *Prepared) NumLinks() int { return len(p.links) }

// Links returns the campaign's tracked URLs in index order (index i+1 is
// Links()[i]); nil when clicks are not tracked.
func (p *Prepared) Links() []string {
	out := make([]string, len(p.links))
	for u, i := range p.links {
		out[i-1] = u
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// honeypotStyle hides the honeypot link from people and screen readers; a
// scanner that follows every href still finds it.
const honeypotStyle = `display:none;max-height:0;overflow:hidden;mso-hide:all`

// track rewrites a rendered HTML body for one recipient: each tracked link's href
// becomes its click URL (the link's text and other attributes stay), and before
// </body> (or at the end) go the hidden honeypot link and the open pixel. With no
// tracking asked for, html comes back unchanged.
func (p *Prepared) track(body string, l Links) string {
	click := l.Click
	if p.links == nil {
		click = nil
	}
	if (click == nil && l.Open == "") || body == "" {
		return body
	}
	var b strings.Builder
	b.Grow(len(body) + 256 + 80*len(p.links))
	tail := func() {
		if click != nil {
			b.WriteString(`<a href="`)
			b.WriteString(html.EscapeString(click(0)))
			b.WriteString(`" style="` + honeypotStyle + `" aria-hidden="true" tabindex="-1"></a>`)
		}
		if l.Open != "" {
			b.WriteString(`<img src="`)
			b.WriteString(html.EscapeString(l.Open))
			b.WriteString(`" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`)
		}
	}
	z := xhtml.NewTokenizer(strings.NewReader(body))
	done := false
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		raw := z.Raw()
		switch tt {
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			if click != nil {
				if tag, ok := p.rewriteTag(z, tt, click); ok {
					b.WriteString(tag)
					continue
				}
			}
		case xhtml.EndTagToken:
			if name, _ := z.TagName(); !done && atom.Lookup(name) == atom.Body {
				tail()
				done = true
			}
		}
		b.Write(raw)
	}
	if !done {
		tail()
	}
	return b.String()
}

// rewriteTag rebuilds the current <a>/<area> tag with its href replaced by the
// click URL when the href is a tracked link; ok is false for any other tag, which
// the caller copies as it was (Raw).
func (p *Prepared) rewriteTag(z *xhtml.Tokenizer, tt xhtml.TokenType, click func(int) string) (string, bool) {
	name, hasAttr := z.TagName()
	if !hasAttr || !isLinkTag(name) {
		return "", false
	}
	type attr struct{ k, v string }
	var attrs []attr
	idx := 0
	for more := true; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		attrs = append(attrs, attr{string(k), string(v)})
		if string(k) == "href" && idx == 0 {
			idx = p.links[strings.TrimSpace(string(v))]
		}
	}
	if idx == 0 {
		return "", false
	}
	var b strings.Builder
	b.WriteString("<")
	b.Write(name)
	for _, a := range attrs {
		v := a.v
		if a.k == "href" {
			v = click(idx)
		}
		b.WriteString(" ")
		b.WriteString(a.k)
		b.WriteString(`="`)
		b.WriteString(html.EscapeString(v))
		b.WriteString(`"`)
	}
	if tt == xhtml.SelfClosingTagToken {
		b.WriteString("/")
	}
	b.WriteString(">")
	return b.String(), true
}
