// Package message turns a campaign and one recipient into the provider.Message that
// is sent: templates rendered with the recipient's data, the deterministic
// Message-ID, and the RFC 8058 unsubscribe headers.
package message

import (
	"bytes"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"
	"text/template/parse"

	"github.com/sendonce/sendonce/internal/apperr"
)

// Data is what a template sees: {{.Email}}, {{.Name}}, {{.Attributes.plan}},
// {{.UnsubscribeURL}}.
type Data struct {
	Email          string
	Name           string
	Attributes     map[string]any
	UnsubscribeURL string
}

// Sample is the recipient templates are rendered against when a campaign is created,
// updated or approved, so a template that cannot execute is refused before it is sent.
var Sample = Data{
	Email:          "sample@example.com",
	Name:           "Sample Subscriber",
	Attributes:     map[string]any{},
	UnsubscribeURL: "https://example.com/u/sample",
}

// Templates are a campaign's parsed subject, HTML and text templates.
type Templates struct {
	subject *texttemplate.Template
	html    *htmltemplate.Template
	text    *texttemplate.Template
	// attrKeys are the attribute names the templates use ({{.Attributes.x}}). A
	// recipient without one gets "" rather than text/template's "<no value>".
	attrKeys []string
}

// Rendered is the output of Templates.Render for one recipient.
type Rendered struct {
	Subject, HTML, Text string
}

// Parse parses the three templates. A missing key in Attributes renders as empty
// rather than "<no value>". The error is an invalid-input error naming the template.
func Parse(subject, html, text string) (*Templates, error) {
	t := &Templates{}
	var err error
	if t.subject, err = texttemplate.New("subject").Option("missingkey=zero").Parse(subject); err != nil {
		return nil, apperr.Invalidf("/subject", "subject template does not parse: %s", clean(err))
	}
	if t.html, err = htmltemplate.New("html").Option("missingkey=zero").Parse(html); err != nil {
		return nil, apperr.Invalidf("/html_template", "html template does not parse: %s", clean(err))
	}
	if t.text, err = texttemplate.New("text").Option("missingkey=zero").Parse(text); err != nil {
		return nil, apperr.Invalidf("/text_template", "text template does not parse: %s", clean(err))
	}
	seen := map[string]bool{}
	for _, tree := range []*parse.Tree{t.subject.Tree, t.html.Tree, t.text.Tree} {
		if tree != nil {
			collectAttrKeys(tree.Root, seen)
		}
	}
	for k := range seen {
		t.attrKeys = append(t.attrKeys, k)
	}
	return t, nil
}

// Validate parses the templates and renders them against Sample.
func Validate(subject, html, text string) error {
	t, err := Parse(subject, html, text)
	if err != nil {
		return err
	}
	_, err = t.Render(Sample)
	return err
}

// Render executes the templates for one recipient.
func (t *Templates) Render(d Data) (Rendered, error) {
	attrs := make(map[string]any, len(d.Attributes)+len(t.attrKeys))
	for k, v := range d.Attributes {
		attrs[k] = v
	}
	for _, k := range t.attrKeys {
		if attrs[k] == nil {
			attrs[k] = ""
		}
	}
	d.Attributes = attrs
	var r Rendered
	var b bytes.Buffer
	if err := t.subject.Execute(&b, d); err != nil {
		return r, apperr.Invalidf("/subject", "subject template does not execute: %s", clean(err))
	}
	// A subject is one header line: fold any newline a template produced.
	r.Subject = strings.Join(strings.Fields(b.String()), " ")
	b.Reset()
	if err := t.html.Execute(&b, d); err != nil {
		return r, apperr.Invalidf("/html_template", "html template does not execute: %s", clean(err))
	}
	r.HTML = b.String()
	b.Reset()
	if err := t.text.Execute(&b, d); err != nil {
		return r, apperr.Invalidf("/text_template", "text template does not execute: %s", clean(err))
	}
	r.Text = b.String()
	return r, nil
}

// collectAttrKeys records x for every {{.Attributes.x}} in the tree.
func collectAttrKeys(n parse.Node, keys map[string]bool) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			for _, c := range n.Nodes {
				collectAttrKeys(c, keys)
			}
		}
	case *parse.ActionNode:
		collectAttrKeys(n.Pipe, keys)
	case *parse.PipeNode:
		if n != nil {
			for _, c := range n.Cmds {
				collectAttrKeys(c, keys)
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			collectAttrKeys(a, keys)
		}
	case *parse.FieldNode:
		if len(n.Ident) >= 2 && n.Ident[0] == "Attributes" {
			keys[n.Ident[1]] = true
		}
	case *parse.IfNode:
		collectAttrKeys(&n.BranchNode, keys)
	case *parse.RangeNode:
		collectAttrKeys(&n.BranchNode, keys)
	case *parse.WithNode:
		collectAttrKeys(&n.BranchNode, keys)
	case *parse.BranchNode:
		collectAttrKeys(n.Pipe, keys)
		collectAttrKeys(n.List, keys)
		collectAttrKeys(n.ElseList, keys)
	case *parse.TemplateNode:
		collectAttrKeys(n.Pipe, keys)
	}
}

// clean drops the "template: name:" prefix Go's errors carry.
func clean(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, "template: "); ok {
		return rest
	}
	return s
}
