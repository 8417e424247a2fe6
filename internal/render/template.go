// Package render turns a campaign and one recipient into the provider.Message that
// is sent: templates rendered with the recipient's data under fixed limits, the
// keyed deterministic Message-ID, and the RFC 8058 unsubscribe headers. Campaign
// sends, test sends and (later) transactional messages all build through it.
package render

import (
	"bytes"
	"encoding/json"
	htmltemplate "html/template"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	texttemplate "text/template"
	"text/template/parse"
	"unsafe"

	"github.com/sendonce/sendonce/internal/apperr"
)

// Data is what a template sees: {{.Email}}, {{.Name}}, {{.Attributes.plan}},
// {{.Event.total}} (a sequence step's: the data of the event that triggered the
// enrollment's run, merged with the events it awaited; empty elsewhere),
// {{.UnsubscribeURL}}, {{.WebViewURL}} (the message's "view in browser" page) and
// {{.Archive}} (true when the public web archive renders the campaign: no
// recipient fields then, so the template can print stand-ins). It has no
// methods, so a template can call none.
type Data struct {
	Email          string
	Name           string
	Attributes     map[string]any
	Event          map[string]any
	UnsubscribeURL string
	WebViewURL     string
	Archive        bool
}

// Sample is the recipient templates are rendered against when a campaign is created,
// updated or approved, so a template that cannot execute is refused before it is sent.
var Sample = Recipient{Email: "sample@example.com", Name: "Sample Subscriber"}

// SampleUnsubscribeURL is the {{.UnsubscribeURL}} of Sample.
const SampleUnsubscribeURL = "https://example.com/u/sample"

// Rendered is the output of the templates for one recipient.
type Rendered struct {
	Subject, HTML, Text string
}

// The three parts of a message, in render order.
const (
	partSubject = iota
	partHTML
	partText
	parts
)

var partPointer = [parts]string{"/subject", "/html_template", "/text_template"}
var partName = [parts]string{"subject", "html", "text"}

// Templates are a campaign's parsed and checked subject, HTML and text templates.
// The parsed templates are never executed themselves: each render borrows a
// renderer holding clones of them (html/template takes a namespace lock on every
// Execute; clones do not share it, and carry their own step budget).
type Templates struct {
	subject *texttemplate.Template
	html    *htmltemplate.Template
	text    *texttemplate.Template
	// attrKeys are the attribute names the templates use ({{.Attributes.x}}). A
	// recipient without one gets "" rather than text/template's "<no value>".
	attrKeys []string
	// usesAttrs is false when no template can reach .Attributes: they are then not decoded.
	usesAttrs bool
	// eventKeys and usesEvent are the same for .Event.
	eventKeys []string
	usesEvent bool
	// static holds the output of parts that contain no action, rendered once.
	static [parts]*string
	// plain holds the subject and text when they are plain (plain.go).
	plain [parts]plain
	// cond holds the HTML's conditional comments (conditional.go), or nil.
	cond *conditionals

	mu        sync.Mutex // guards cloning from the parsed templates
	renderers sync.Pool  // *renderer
}

// Parse parses the three templates and checks them against the limits of bound.go.
// The error is an invalid-input error naming the template.
func Parse(subject, html, text string) (*Templates, error) {
	t := &Templates{}
	var err error
	if t.subject, err = texttemplate.New("subject").Option("missingkey=zero").Funcs(parseFuncs).Parse(subject); err != nil {
		return nil, invalid(partSubject, "does not parse: %s", clean(err))
	}
	html, t.cond = protectConditionals(html)
	if t.html, err = htmltemplate.New("html").Option("missingkey=zero").Funcs(parseFuncs).Parse(html); err != nil {
		return nil, invalid(partHTML, "does not parse: %s", clean(err))
	}
	if t.text, err = texttemplate.New("text").Option("missingkey=zero").Funcs(parseFuncs).Parse(text); err != nil {
		return nil, invalid(partText, "does not parse: %s", clean(err))
	}
	trees := [parts]*parse.Tree{t.subject.Tree, t.html.Tree, t.text.Tree}
	counts := [parts]int{len(t.subject.Templates()), len(t.html.Templates()), len(t.text.Templates())}
	seen, seenEvent := map[string]bool{}, map[string]bool{}
	for i, tree := range trees {
		if err := check(tree, counts[i]); err != nil {
			return nil, invalid(i, "%s", err)
		}
		u := collectKeys(tree.Root, "Attributes", seen)
		t.usesAttrs = t.usesAttrs || u
		u = collectKeys(tree.Root, "Event", seenEvent)
		t.usesEvent = t.usesEvent || u
		if isStatic(tree.Root) {
			t.static[i] = new(string)
		} else if pl, ok := compilePlain(tree.Root); ok && i != partHTML { // HTML: compileHTML
			t.plain[i] = pl
		}
		addSteps(tree)
	}
	for k := range seen {
		t.attrKeys = append(t.attrKeys, k)
	}
	for k := range seenEvent {
		t.eventKeys = append(t.eventKeys, k)
	}
	if t.static[partHTML] == nil {
		if err := t.compileHTML(); err != nil {
			return nil, err
		}
	}
	// Render the action-free parts once (html/template still rewrites their text).
	if t.static != [parts]*string{} {
		r, err := t.renderer()
		if err != nil {
			return nil, err
		}
		for i, s := range t.static {
			if s != nil {
				r.buf.Reset()
				if err := r.execute(&r.buf, i, Data{}); err != nil {
					return nil, err
				}
				*s = r.buf.String()
				if i == partSubject {
					*s = foldSubject(*s)
				}
			}
		}
		t.renderers.Put(r)
	}
	return t, nil
}

// compileHTML escapes a renderer's HTML clone by rendering it for the sample
// recipient, then compiles the escaped tree when it is plain. A template that
// fails here is left to fail the same way on every render.
func (t *Templates) compileHTML() error {
	r, err := t.renderer()
	if err != nil {
		return err
	}
	defer t.renderers.Put(r)
	attrs, err := decodeAttrs(nil, t.attrKeys)
	if err != nil {
		return err
	}
	event, err := decodeEvent(nil, t.eventKeys)
	if err != nil {
		return err
	}
	r.steps = MaxSteps
	d := Data{Email: Sample.Email, Name: Sample.Name, Attributes: attrs, Event: event, UnsubscribeURL: SampleUnsubscribeURL}
	err = r.html.Execute(io.Discard, d)
	if t.cond != nil {
		t.cond.restoreTree(r.html)
		r.condDone = true
	}
	if err == nil {
		if pl, ok := compilePlain(r.html.Tree.Root); ok {
			t.plain[partHTML] = pl
		}
	}
	return nil
}

// Validate parses the templates and renders them for Sample, so a template that
// cannot execute or exceeds a limit is refused when it is saved.
func Validate(subject, html, text string) error {
	t, err := Parse(subject, html, text)
	if err != nil {
		return err
	}
	_, err = t.Render(Sample, SampleUnsubscribeURL)
	return err
}

// Render executes the templates for one recipient.
func (t *Templates) Render(r Recipient, unsubscribeURL string) (Rendered, error) {
	return t.render(r, Data{UnsubscribeURL: unsubscribeURL})
}

// RenderWebView executes the templates for a recipient's "view in browser" page:
// webViewURL is the page's own address.
func (t *Templates) RenderWebView(r Recipient, unsubscribeURL, webViewURL string) (Rendered, error) {
	return t.render(r, Data{UnsubscribeURL: unsubscribeURL, WebViewURL: webViewURL})
}

// RenderArchive executes the templates for the public web archive: no recipient,
// every attribute a template names empty, .Archive true.
func (t *Templates) RenderArchive() (Rendered, error) {
	return t.render(Recipient{}, Data{Archive: true})
}

// render executes the templates for rc; d carries the links (and Archive), its
// recipient fields are rc's.
func (t *Templates) render(rc Recipient, d Data) (Rendered, error) {
	return t.renderTo(nil, rc, d)
}

// renderTo is render; with dst, the HTML and text are written into dst (reset
// first) and the returned ones are dst's bytes, not a copy: valid until dst is
// written again. The subject is always its own string.
func (t *Templates) renderTo(dst *bytes.Buffer, rc Recipient, d Data) (Rendered, error) {
	d.Email, d.Name, d.Attributes, d.Event = rc.Email, rc.Name, nil, nil
	if t.usesAttrs || d.Archive {
		attrs, err := decodeAttrs(rc.Attributes, t.attrKeys)
		if err != nil {
			return Rendered{}, err
		}
		d.Attributes = attrs
	}
	if t.usesEvent || d.Archive {
		event, err := decodeEvent(rc.Event, t.eventKeys)
		if err != nil {
			return Rendered{}, err
		}
		d.Event = event
	}
	r, err := t.renderer()
	if err != nil {
		return Rendered{}, err
	}
	defer t.renderers.Put(r)
	r.steps = MaxSteps
	// The parts are rendered one after another into one buffer and copied out as
	// one string, which the three parts then share (or, into dst, not copied).
	buf := &r.buf
	if dst != nil {
		buf = dst
	}
	buf.Reset()
	var bounds [parts][2]int
	for i := range parts {
		if t.static[i] == nil {
			start := buf.Len()
			var err error
			if pl := t.plain[i]; pl != nil {
				r.out = limitWriter{w: buf, left: maxOutput[i]}
				if err = pl.execute(&r.out, &d); err != nil {
					err = execError(i, err)
				}
			} else {
				err = r.execute(buf, i, d)
			}
			if err != nil {
				return Rendered{}, err
			}
			bounds[i] = [2]int{start, buf.Len()}
		}
	}
	var all string
	if dst != nil {
		all = aliasOf(dst)
	} else {
		all = buf.String()
	}
	var out [parts]string
	for i := range parts {
		if s := t.static[i]; s != nil {
			out[i] = *s
		} else {
			out[i] = all[bounds[i][0]:bounds[i][1]]
		}
	}
	if t.static[partSubject] == nil {
		out[partSubject] = foldSubject(out[partSubject])
		if dst != nil {
			out[partSubject] = strings.Clone(out[partSubject])
		}
	}
	return Rendered{Subject: out[partSubject], HTML: out[partHTML], Text: out[partText]}, nil
}

// aliasOf is b's bytes as a string without copying them: valid only while b is
// not written again (BuildInto's contract).
func aliasOf(b *bytes.Buffer) string {
	if b.Len() == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b.Bytes()), b.Len())
}

// foldSubject makes a subject one header line: runs of white space (a newline a
// template produced included) become one space, none at either end.
func foldSubject(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		switch c := s[i]; {
		case c == ' ':
			clean = i > 0 && i < len(s)-1 && s[i-1] != ' '
		case c <= ' ' || c >= 0x80:
			clean = false // other ASCII white space or control, or non-ASCII (which may be white space)
		}
	}
	if clean {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// renderer is one goroutine's set of template clones with its step budget and
// output buffer, reused through Templates.renderers.
type renderer struct {
	subject *texttemplate.Template
	html    *htmltemplate.Template
	text    *texttemplate.Template
	steps   int // left in this render
	buf     bytes.Buffer
	out     limitWriter
	// cond are the HTML's conditional comments, put back in the text of the
	// html clone once it is escaped (condDone).
	cond     *conditionals
	condDone bool
}

func (t *Templates) renderer() (*renderer, error) {
	if r, ok := t.renderers.Get().(*renderer); ok {
		return r, nil
	}
	r := &renderer{cond: t.cond}
	funcs := r.funcs()
	t.mu.Lock()
	defer t.mu.Unlock()
	var err error
	if r.html, err = t.html.Clone(); err != nil {
		return nil, err // only after an Execute of t.html, which never happens
	}
	r.html.Funcs(funcs)
	r.subject = must(t.subject.Clone()).Funcs(funcs)
	r.text = must(t.text.Clone()).Funcs(funcs)
	return r, nil
}

func must(t *texttemplate.Template, err error) *texttemplate.Template {
	if err != nil {
		panic(err) // text/template's Clone cannot fail
	}
	return t
}

// execute renders one part at the end of buf under the output limit.
func (r *renderer) execute(buf *bytes.Buffer, part int, d Data) error {
	r.out = limitWriter{w: buf, left: maxOutput[part]}
	var err error
	switch part {
	case partSubject:
		err = r.subject.Execute(&r.out, d)
	case partHTML:
		if r.cond != nil && !r.condDone {
			// Escape the clone first (html/template does it on the first
			// Execute), then put the comments back in its text.
			steps := r.steps
			_ = r.html.Execute(io.Discard, d)
			r.steps = steps
			r.cond.restoreTree(r.html)
			r.condDone = true
		}
		err = r.html.Execute(&r.out, d)
	default:
		err = r.text.Execute(&r.out, d)
	}
	if err != nil {
		return execError(part, err)
	}
	return nil
}

// decodeAttrs decodes a recipient's attributes for the templates and gives every
// attribute a template names a value, so a missing one renders as "".
func decodeAttrs(raw []byte, keys []string) (map[string]any, error) {
	if len(raw) > MaxAttributeBytes {
		return nil, apperr.Invalidf("/attributes", "the subscriber's attributes exceed the %d bytes templates may read", MaxAttributeBytes)
	}
	var attrs map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &attrs); err != nil {
			return nil, apperr.Invalidf("/attributes", "subscriber attributes: %s", err)
		}
	}
	if attrs == nil {
		attrs = make(map[string]any, len(keys))
	}
	for _, k := range keys {
		if attrs[k] == nil {
			attrs[k] = ""
		}
	}
	return attrs, nil
}

// UsesEvent reports whether the templates may read .Event: a sequence step's
// event data is fetched only for them.
func (t *Templates) UsesEvent() bool { return t.usesEvent }

// decodeEvent is decodeAttrs for a sequence step's event data.
func decodeEvent(raw []byte, keys []string) (map[string]any, error) {
	if len(raw) > MaxAttributeBytes {
		return nil, apperr.Invalidf("/event", "the event data exceeds the %d bytes templates may read", MaxAttributeBytes)
	}
	var event map[string]any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &event); err != nil {
			return nil, apperr.Invalidf("/event", "event data: %s", err)
		}
	}
	if event == nil {
		event = make(map[string]any, len(keys))
	}
	for _, k := range keys {
		if event[k] == nil {
			event[k] = ""
		}
	}
	return event, nil
}

// collectKeys records x for every {{.<root>.x}} in the tree and reports whether
// the templates may read .<root> at all (a bare {{.}} or {{$}} may).
func collectKeys(n parse.Node, root string, keys map[string]bool) bool {
	uses := false
	walk(n, func(n parse.Node, _ int) {
		var ident []string
		switch n := n.(type) {
		case *parse.FieldNode:
			ident = n.Ident
		case *parse.VariableNode:
			if n.Ident[0] != "$" {
				return
			}
			ident = n.Ident[1:]
			if len(ident) == 0 {
				uses = true
			}
		case *parse.ChainNode:
			ident = n.Field
		case *parse.DotNode:
			uses = true
		}
		if len(ident) >= 1 && ident[0] == root {
			uses = true
			if len(ident) >= 2 {
				keys[ident[1]] = true
			}
		}
	})
	return uses
}

// isStatic reports whether a tree has no action: its output is the same for everyone.
func isStatic(root *parse.ListNode) bool {
	if root == nil {
		return true
	}
	for _, n := range root.Nodes {
		if _, ok := n.(*parse.TextNode); !ok {
			return false
		}
	}
	return true
}

func invalid(part int, format string, args ...any) error {
	e := apperr.Invalidf(partPointer[part], partName[part]+" template "+format, args...)
	e.Fields[0].Line = errorLine(partName[part], e.Message)
	return e
}

// errorLine is the line of the template named name that a Go template error in msg
// points at ("html:3: unexpected …", "html/template:html:3:14: …", "html:3:5:
// executing …"), or 0 when it names none.
func errorLine(name, msg string) int {
	m := lineRefs[name].FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}

var lineRefs = func() map[string]*regexp.Regexp {
	out := map[string]*regexp.Regexp{}
	for _, name := range partName {
		out[name] = regexp.MustCompile(`(?:^|[\s:])` + name + `:(\d{1,7}):`)
	}
	return out
}()

// clean drops the "template: name:" prefix Go's errors carry.
func clean(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, "template: "); ok {
		return rest
	}
	return s
}
