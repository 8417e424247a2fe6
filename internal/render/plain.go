package render

import (
	"fmt"
	"io"
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
func (p plain) execute(w io.Writer, d *Data) error {
	for _, s := range p {
		var err error
		if s.esc != nil {
			v := stringify(s.value(d))
			for _, e := range s.esc {
				v = e(v)
			}
			if _, err = io.WriteString(w, v); err != nil {
				return err
			}
			continue
		}
		switch s.field {
		case textField:
			_, err = io.WriteString(w, s.text)
		case emailField:
			_, err = io.WriteString(w, d.Email)
		case nameField:
			_, err = io.WriteString(w, d.Name)
		case unsubscribeField:
			_, err = io.WriteString(w, d.UnsubscribeURL)
		case attrsField:
			_, err = fmt.Fprint(w, d.Attributes)
		case attrField:
			// Every attribute a template names is in the map (decodeAttrs).
			switch v := d.Attributes[s.key].(type) {
			case string:
				_, err = io.WriteString(w, v)
			default:
				_, err = fmt.Fprint(w, v)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
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
