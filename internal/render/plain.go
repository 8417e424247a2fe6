package render

import (
	"fmt"
	"strings"
	"text/template/parse"
)

// plain is a text/template part (subject or text) made only of literal text and
// references to a recipient's fields — {{.Name}}, {{.Email}}, {{.UnsubscribeURL}},
// {{.Attributes}}, {{.Attributes.key}}, or the same from $ — which is what most
// subjects and text bodies are. It renders without text/template (which evaluates
// every field and print through reflection) and writes exactly what text/template
// writes: a string as is, any other value as fmt.Fprint prints it.
type plain []segment

type segment struct {
	text  string
	field field
	key   string // the attribute, for attrField
	// esc are the escapers html/template put after the field (HTML parts only).
	esc []func(string) string
}

type field int

const (
	textField field = iota
	emailField
	nameField
	unsubscribeField
	attrsField
	attrField
)

// compilePlain returns the plain form of a tree, or false when the tree uses
// anything else (a pipeline, a function, a control structure, a deeper path). An
// HTML part is compiled from the tree html/template escaped, whose actions end in
// the escapers it chose for their context; only those of htmlesc.go are accepted.
func compilePlain(root *parse.ListNode) (plain, bool) {
	if root == nil {
		return plain{}, true
	}
	out := make(plain, 0, len(root.Nodes))
	for _, n := range root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			out = append(out, segment{text: string(n.Text)})
		case *parse.ActionNode:
			s, ok := plainAction(n)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		default:
			return nil, false
		}
	}
	return out, true
}

func plainAction(n *parse.ActionNode) (segment, bool) {
	p := n.Pipe
	if p == nil || len(p.Decl) > 0 || len(p.Cmds) == 0 || len(p.Cmds[0].Args) != 1 {
		return segment{}, false
	}
	var esc []func(string) string
	for _, c := range p.Cmds[1:] {
		id, ok := c.Args[0].(*parse.IdentifierNode)
		if !ok || len(c.Args) != 1 || escapers[id.Ident] == nil {
			return segment{}, false
		}
		esc = append(esc, escapers[id.Ident])
	}
	s, ok := plainField(p.Cmds[0].Args[0])
	s.esc = esc
	return s, ok
}

func plainField(arg parse.Node) (segment, bool) {
	var path []string
	switch a := arg.(type) {
	case *parse.FieldNode:
		path = a.Ident
	case *parse.VariableNode:
		if a.Ident[0] != "$" {
			return segment{}, false
		}
		path = a.Ident[1:]
	default:
		return segment{}, false
	}
	switch {
	case len(path) == 1 && path[0] == "Email":
		return segment{field: emailField}, true
	case len(path) == 1 && path[0] == "Name":
		return segment{field: nameField}, true
	case len(path) == 1 && path[0] == "UnsubscribeURL":
		return segment{field: unsubscribeField}, true
	case len(path) == 1 && path[0] == "Attributes":
		return segment{field: attrsField}, true
	case len(path) == 2 && path[0] == "Attributes":
		return segment{field: attrField, key: path[1]}, true
	}
	return segment{}, false
}

// execute writes the part for d to w.
func (p plain) execute(w *limitWriter, d *Data) error {
	for i := range p {
		s := &p[i]
		v := s.text
		if s.field != textField {
			v = s.render(d)
		}
		if _, err := w.WriteString(v); err != nil {
			return err
		}
	}
	return nil
}

// size returns the bytes the part renders for d, appending what each of its
// fields renders to vals (a text segment's bytes are its text).
func (p plain) size(d *Data, vals []string) (int, []string) {
	n := 0
	for i := range p {
		s := &p[i]
		if s.field == textField {
			n += len(s.text)
			continue
		}
		v := s.render(d)
		vals = append(vals, v)
		n += len(v)
	}
	return n, vals
}

// write writes the part to b, its fields' output taken in order from vals (as
// size returned them); it returns what is left of vals.
func (p plain) write(b *strings.Builder, vals []string) []string {
	for i := range p {
		if s := &p[i]; s.field == textField {
			b.WriteString(s.text)
			continue
		}
		b.WriteString(vals[0])
		vals = vals[1:]
	}
	return vals
}

// render is what the segment writes for d: text/template writes a string as is
// and any other value as fmt.Fprint prints it; an HTML part's escapers then
// apply, to the value html/template's stringify made.
func (s *segment) render(d *Data) string {
	if s.esc != nil {
		v := stringify(s.value(d))
		for _, e := range s.esc {
			v = e(v)
		}
		return v
	}
	switch s.field {
	case emailField:
		return d.Email
	case nameField:
		return d.Name
	case unsubscribeField:
		return d.UnsubscribeURL
	case attrsField:
		return fmt.Sprint(d.Attributes)
	case attrField:
		// Every attribute a template names is in the map (decodeAttrs).
		if v, ok := d.Attributes[s.key].(string); ok {
			return v
		}
		return fmt.Sprint(d.Attributes[s.key])
	}
	return s.text
}

// value is the field's value for d.
func (s *segment) value(d *Data) any {
	switch s.field {
	case emailField:
		return d.Email
	case nameField:
		return d.Name
	case unsubscribeField:
		return d.UnsubscribeURL
	case attrsField:
		return d.Attributes
	case attrField:
		return d.Attributes[s.key]
	}
	return s.text
}
