// Package contentlint reads an email's content (subject, HTML and text, as
// written: Go template source) for what hurts its reach or its readers before it
// is approved: images without alternative text, links that say "click here", an
// email that is only images, a campaign without an unsubscribe link, HTML past
// the size Gmail clips, words and links spam filters weigh. Findings advise; they
// never block a send (the checks of saving and approving do that).
package contentlint

import (
	"bytes"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Kind is what the content is for: a campaign (or sequence step) must carry an
// unsubscribe link; a transactional message need not.
type Kind string

// The kinds of content.
const (
	Campaign Kind = "campaign"
	Message  Kind = "message"
)

// Severity says how much a finding matters: a warning is likely to cost
// delivery or readers; a note is advice.
type Severity string

// The severities.
const (
	Warning Severity = "warning"
	Note    Severity = "note"
)

// Finding is one thing the lint found.
type Finding struct {
	Rule     string
	Severity Severity
	// Field is the part it is in: /subject, /html or /text.
	Field   string
	Message string
	// Excerpt is the element or words at fault, shortened (empty when the finding
	// is about the whole part).
	Excerpt string
}

// Content is what is linted.
type Content struct {
	Kind    Kind
	Subject string
	HTML    string
	Text    string
}

// ClipBytes is the size of HTML past which Gmail shows "[Message clipped]" and
// hides the rest, the footer's unsubscribe link with it.
const ClipBytes = 102 * 1024

// genericLinkText are link texts that say nothing out of context: a screen
// reader's list of links reads them alone (WCAG 2.4.4, link purpose).
var genericLinkText = map[string]bool{"click here": true, "here": true, "click": true, "read more": true,
	"more": true, "link": true, "this link": true, "learn more": true, "this": true, "go": true}

// shorteners are public URL shorteners: spam filters judge a link by the domain it
// shows, and these are shared with every sender who ever abused them.
var shorteners = map[string]bool{"bit.ly": true, "tinyurl.com": true, "t.co": true, "goo.gl": true, "ow.ly": true,
	"is.gd": true, "buff.ly": true, "rebrand.ly": true, "cutt.ly": true, "shorturl.at": true}

// stripped are elements mail clients remove or refuse to run.
var stripped = map[atom.Atom]bool{atom.Script: true, atom.Form: true, atom.Iframe: true, atom.Object: true,
	atom.Embed: true, atom.Video: true, atom.Audio: true}

// Lint reads c and returns its findings, in the order of the parts.
func Lint(c Content) []Finding {
	var out []Finding
	add := func(rule string, sev Severity, field, msg, excerpt string) {
		out = append(out, Finding{Rule: rule, Severity: sev, Field: field, Message: msg, Excerpt: shorten(excerpt)})
	}
	lintSubject(c.Subject, add)
	if c.HTML != "" {
		lintHTML(c.HTML, add)
	}
	if c.Kind != Message && !strings.Contains(c.HTML, "UnsubscribeURL") && !strings.Contains(c.Text, "UnsubscribeURL") {
		add("unsubscribe-missing", Warning, "/html", "no unsubscribe link in the body: bulk senders must offer one in the message "+
			"(Gmail and Yahoo's sender rules, CAN-SPAM); add {{.UnsubscribeURL}} to the footer. The List-Unsubscribe header is sent either way.", "")
	}
	if c.HTML != "" && strings.TrimSpace(c.Text) == "" {
		add("text-missing", Note, "/text", "no plain-text part: the message goes out as HTML alone, which some spam filters weigh and text-only readers cannot read", "")
	}
	return out
}

func lintSubject(s string, add func(rule string, sev Severity, field, msg, excerpt string)) {
	letters, upper := 0, 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	if letters >= 10 && upper == letters {
		add("subject-all-caps", Warning, "/subject", "the subject is in capitals: spam filters weigh it, and it reads as shouting", s)
	}
	if strings.Count(s, "!") >= 3 {
		add("subject-exclamations", Warning, "/subject", "three or more exclamation marks in the subject: spam filters weigh them", s)
	}
	if strings.TrimSpace(s) == "" {
		add("subject-empty", Warning, "/subject", "the subject is empty", "")
	}
}

func lintHTML(src string, add func(rule string, sev Severity, field, msg, excerpt string)) {
	if len(src) > ClipBytes {
		add("html-clipped", Warning, "/html", "the HTML is over 102 KB: Gmail clips it and hides the rest, the unsubscribe link with it", "")
	}
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil { // html.Parse recovers from anything but a failing reader
		return
	}
	images, textLen := 0, 0
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			if !inside(n, atom.Style, atom.Script, atom.Title, atom.Head) {
				textLen += len(strings.Join(strings.Fields(n.Data), " "))
			}
		case html.ElementNode:
			switch {
			case n.DataAtom == atom.Img:
				images++
				if _, ok := attr(n, "alt"); !ok {
					add("image-alt-missing", Warning, "/html", "an image has no alt text: readers with images off or a screen reader get nothing "+
						"(alt=\"\" marks a decorative one)", render(n))
				}
			case n.DataAtom == atom.A:
				lintLink(n, add)
			case stripped[n.DataAtom]:
				add("element-stripped", Warning, "/html", "<"+n.Data+"> is removed or not run by mail clients", render(n))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if images > 0 && textLen < 100 {
		add("images-only", Warning, "/html", "the email is almost only images: spam filters distrust it, and with images off (the default of many clients) it says nothing", "")
	}
}

func lintLink(n *html.Node, add func(rule string, sev Severity, field, msg, excerpt string)) {
	href, _ := attr(n, "href")
	text := strings.ToLower(strings.TrimFunc(strings.Join(strings.Fields(textOf(n)), " "), func(r rune) bool {
		return unicode.IsPunct(r) || unicode.IsSpace(r)
	}))
	if _, labelled := attr(n, "aria-label"); genericLinkText[text] && !labelled {
		add("link-text-generic", Warning, "/html", "a link says \""+text+"\": name where it goes (a screen reader lists links alone)", render(n))
	}
	if strings.HasPrefix(strings.TrimSpace(href), "{{") {
		return // a template action: known only when rendered
	}
	if u, err := url.Parse(strings.TrimSpace(href)); err == nil && shorteners[strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")] {
		add("link-shortener", Warning, "/html", "a link goes through a public URL shortener ("+u.Hostname()+"): spam filters judge links by the "+
			"domain they show, and shorteners are shared with abusers; link to your own domain", href)
	}
}

// inside reports whether n is within an element of one of the atoms.
func inside(n *html.Node, atoms ...atom.Atom) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		for _, a := range atoms {
			if p.DataAtom == a {
				return true
			}
		}
	}
	return false
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// textOf is the text inside n, and the alt text of its images (an image link's name).
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Img {
			alt, _ := attr(n, "alt")
			b.WriteString(alt)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// render is n as HTML, for an excerpt.
func render(n *html.Node) string {
	var b bytes.Buffer
	_ = html.Render(&b, n)
	return b.String()
}

// shorten keeps an excerpt to 120 characters.
func shorten(s string) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= 120 {
		return string(r)
	}
	return string(r[:117]) + "…"
}
