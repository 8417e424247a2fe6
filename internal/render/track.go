package render

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

// UsesEvent reports whether the campaign's templates may read .Event.
func (p *Prepared) UsesEvent() bool { return p.tpl.UsesEvent() }

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
// value becomes its click URL (the link's text, the tag's other attributes and
// its spelling stay), and before the last </body> (or at the end) go the hidden
// honeypot link and the open pixel. With no tracking asked for, body comes back
// unchanged. It is a single forward scan (no tokenizer allocations per tag): it
// skips comments and the raw text of <script> and <style>, and reads the href of
// each <a> and <area> as the HTML tokenizer would.
func (p *Prepared) track(body string, l Links) string {
	if !p.tracks(body, l) {
		return body
	}
	var b strings.Builder
	p.trackInto(&b, body, l)
	return b.String()
}

// tracks reports whether track changes body.
func (p *Prepared) tracks(body string, l Links) bool {
	return ((p.links != nil && l.Click != nil) || l.Open != "") && body != ""
}

// trackWriter is where trackInto writes: a strings.Builder, or the reused
// bytes.Buffer of BuildInto; neither ever returns an error from a write.
type trackWriter interface {
	Grow(n int)
	WriteString(s string) (int, error)
}

// trackInto writes track's rewrite of body to b (tracks(body, l) must be true).
func (p *Prepared) trackInto(b trackWriter, body string, l Links) {
	click := l.Click
	if p.links == nil {
		click = nil
	}
	b.Grow(len(body) + 256 + 80*len(p.links))
	last := 0 // body[:last] is written
	if click != nil {
		for i := 0; i < len(body); {
			lt := strings.IndexByte(body[i:], '<')
			if lt < 0 {
				break
			}
			i += lt
			rest := body[i:]
			switch {
			case strings.HasPrefix(rest, "<!--"):
				end := strings.Index(rest[4:], "-->")
				if end < 0 {
					i = len(body)
				} else {
					i += 4 + end + 3
				}
				continue
			case hasTagPrefix(rest, "script"), hasTagPrefix(rest, "style"):
				name := "</script"
				if hasTagPrefix(rest, "style") {
					name = "</style"
				}
				end := indexFold(rest, name)
				if end < 0 {
					i = len(body)
				} else {
					i += end + len(name)
				}
				continue
			case hasTagPrefix(rest, "a"), hasTagPrefix(rest, "area"):
				vs, ve, end := hrefValue(rest)
				if vs >= 0 {
					if idx := p.links[strings.TrimSpace(attrValue(rest[vs:ve]))]; idx > 0 {
						_, _ = b.WriteString(body[last : i+vs])
						_, _ = b.WriteString(html.EscapeString(click(idx)))
						last = i + ve
					}
				}
				i += end
				continue
			}
			i++
		}
	}
	tailAt := len(body)
	if end := lastIndexFold(body, "</body"); end >= last {
		tailAt = end
	}
	_, _ = b.WriteString(body[last:tailAt])
	if click != nil {
		_, _ = b.WriteString(`<a href="`)
		_, _ = b.WriteString(html.EscapeString(click(0)))
		_, _ = b.WriteString(`" style="` + honeypotStyle + `" aria-hidden="true" tabindex="-1"></a>`)
	}
	if l.Open != "" {
		_, _ = b.WriteString(`<img src="`)
		_, _ = b.WriteString(html.EscapeString(l.Open))
		_, _ = b.WriteString(`" width="1" height="1" alt="" style="display:block;border:0;width:1px;height:1px">`)
	}
	_, _ = b.WriteString(body[tailAt:])
}

// hasTagPrefix reports whether s starts with the start tag <name followed by
// white space, '/' or '>' (ASCII case-insensitive).
func hasTagPrefix(s, name string) bool {
	if len(s) < len(name)+2 || !strings.EqualFold(s[1:1+len(name)], name) {
		return false
	}
	switch s[1+len(name)] {
	case ' ', '\t', '\n', '\r', '\f', '/', '>':
		return true
	}
	return false
}

// hrefValue reads the start tag at the beginning of s: the byte range of its first
// href attribute's value (without quotes; -1 when it has none) and where the tag
// ends (just past '>', or len(s)).
func hrefValue(s string) (vs, ve, end int) {
	vs, ve = -1, -1
	i := 1
	for i < len(s) && !isSpace(s[i]) && s[i] != '>' && s[i] != '/' { // the tag name
		i++
	}
	for i < len(s) {
		for i < len(s) && (isSpace(s[i]) || s[i] == '/') {
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] == '>' {
			return vs, ve, i + 1
		}
		ns := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '>' && !(s[i] == '/' && i > ns) {
			i++
		}
		name := s[ns:i]
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) || s[i] != '=' {
			continue // an attribute without a value
		}
		i++
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		var a, z int
		if i < len(s) && (s[i] == '"' || s[i] == '\'') {
			q := s[i]
			a = i + 1
			c := strings.IndexByte(s[a:], q)
			if c < 0 {
				return vs, ve, len(s)
			}
			z = a + c
			i = z + 1
		} else {
			a = i
			for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
				i++
			}
			z = i
		}
		if vs < 0 && strings.EqualFold(name, "href") {
			vs, ve = a, z
		}
	}
	return vs, ve, len(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// attrValue decodes character references in an attribute value, as the
// tokenizer does.
func attrValue(v string) string {
	if strings.IndexByte(v, '&') < 0 {
		return v
	}
	return html.UnescapeString(v)
}

// indexFold is strings.Index, ASCII case-insensitive in sub.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// lastIndexFold is strings.LastIndex, ASCII case-insensitive in sub.
func lastIndexFold(s, sub string) int {
	for i := len(s) - len(sub); i >= 0; i-- {
		if s[i] == '<' && strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}
