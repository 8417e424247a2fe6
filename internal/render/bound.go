package render

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	texttemplate "text/template"
	"text/template/parse"
)

// A Go template cannot be interrupted once it runs, and one tenant's template runs
// for every recipient on the executor all tenants share. So a template is bounded
// before it runs (check, when it is parsed) and while it runs (steps and output):
//
//   - at most MaxNodes nodes, control structures nested at most MaxNesting deep, no
//     {{define}}, {{block}} or {{template}} (so no recursion), and only the functions
//     of allowedFuncs; printf takes a literal format whose widths and precisions are
//     at most MaxFormatWidth and never '*';
//   - {{range N}} over an integer literal only up to MaxRangeLiteral;
//   - every range iteration costs steps (the nodes of its body) from a budget of
//     MaxSteps per message, and so does every 64 bytes a function returns: a range
//     over data (nested ranges over attributes, range over len) stops there;
//   - each part's output is cut at maxOutput bytes;
//   - the data is bounded: attributes reach templates only up to MaxAttributeBytes
//     of JSON (the API's body limit bounds them when stored), addresses and names
//     by the API's field limits.
//
// A template over a static limit is refused when it is saved (422 naming it); one
// that runs into a limit for some recipient fails that recipient's send for good.
const (
	MaxNodes          = 10_000
	MaxNesting        = 10
	MaxRangeLiteral   = 1_000
	MaxFormatWidth    = 100
	MaxSteps          = 20_000
	MaxOutputBytes    = 512 << 10 // per HTML or text part
	MaxSubjectBytes   = 4 << 10
	MaxAttributeBytes = 64 << 10
	bytesPerStep      = 64
)

var maxOutput = [parts]int{MaxSubjectBytes, MaxOutputBytes, MaxOutputBytes}

// allowedFuncs are the functions a template may call: the comparison, logic and
// escaping built-ins. Not call (no function values reach a template anyway).
var allowedFuncs = map[string]bool{
	"and": true, "or": true, "not": true, "len": true, "index": true, "slice": true,
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"print": true, "printf": true, "println": true, "html": true, "js": true, "urlquery": true,
}

// stepFunc and lenFunc are the functions addSteps plants around ranges; their names
// cannot be written in a template (check refuses them); renderers define them.
const (
	stepFunc = "_sendonce_step"
	lenFunc  = "_sendonce_len"
)

// parseFuncs make the parser accept the step function in the planted nodes.
var parseFuncs = texttemplate.FuncMap{
	stepFunc: func(int) (bool, error) { return false, nil },
	lenFunc:  func(any) (bool, error) { return false, nil },
}

var (
	errSteps   = errors.New("step limit reached")
	errTooMuch = errors.New("output limit reached")
)

// check refuses a tree (and its template set of count templates) over a static limit.
func check(tree *parse.Tree, count int) error {
	if count > 1 {
		return errors.New("may not {{define}} or {{block}} templates")
	}
	if tree == nil || tree.Root == nil {
		return nil
	}
	nodes := 0
	var err error
	walk(tree.Root, func(n parse.Node, depth int) {
		nodes++
		if err != nil {
			return
		}
		loc := func() string { l, _ := tree.ErrorContext(n); return l + ": " }
		switch n := n.(type) {
		case *parse.TemplateNode:
			err = fmt.Errorf("%s{{template}} is not allowed", loc())
		case *parse.IdentifierNode:
			if !allowedFuncs[n.Ident] {
				err = fmt.Errorf("%sfunction %q is not allowed", loc(), n.Ident)
			}
		case *parse.RangeNode:
			if v, ok := intLiteral(n.Pipe); ok && v > MaxRangeLiteral {
				err = fmt.Errorf("%srange over %d: at most %d iterations", loc(), v, MaxRangeLiteral)
			}
		case *parse.CommandNode:
			if id, ok := n.Args[0].(*parse.IdentifierNode); ok && id.Ident == "printf" {
				if e := checkFormat(n); e != nil {
					err = fmt.Errorf("%s%w", loc(), e)
				}
			}
		}
		if depth > MaxNesting {
			err = fmt.Errorf("%snested more than %d deep", loc(), MaxNesting)
		}
	})
	if err == nil && nodes > MaxNodes {
		err = fmt.Errorf("has %d nodes: at most %d", nodes, MaxNodes)
	}
	return err
}

// intLiteral returns N for a pipeline that is just the integer literal N.
func intLiteral(p *parse.PipeNode) (int64, bool) {
	if p == nil || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
		return 0, false
	}
	if num, ok := p.Cmds[0].Args[0].(*parse.NumberNode); ok {
		if num.IsInt {
			return num.Int64, true
		}
		if num.IsFloat {
			return int64(num.Float64), true
		}
	}
	return 0, false
}

// checkFormat accepts printf with a literal format whose widths and precisions
// are at most MaxFormatWidth: fmt pads in memory before any output limit applies.
func checkFormat(cmd *parse.CommandNode) error {
	if len(cmd.Args) < 2 {
		return errors.New("printf needs a literal format")
	}
	f, ok := cmd.Args[1].(*parse.StringNode)
	if !ok {
		return errors.New("printf needs a literal format")
	}
	s := f.Text
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		for i++; i < len(s); i++ {
			c := s[i]
			switch {
			case c == '*':
				return errors.New("printf: '*' widths are not allowed")
			case '0' <= c && c <= '9':
				j := i
				for j < len(s) && '0' <= s[j] && s[j] <= '9' {
					j++
				}
				if n, err := strconv.Atoi(s[i:j]); err != nil || n > MaxFormatWidth {
					return fmt.Errorf("printf: widths and precisions are at most %d", MaxFormatWidth)
				}
				i = j - 1
				continue
			case c == '.' || c == '+' || c == '-' || c == '#' || c == ' ' || c == '[' || c == ']':
				continue
			}
			break // the verb
		}
	}
	return nil
}

// walk calls fn for every node under n with its control-structure depth.
func walk(n parse.Node, fn func(parse.Node, int)) { walkDepth(n, 0, fn) }

func walkDepth(n parse.Node, depth int, fn func(parse.Node, int)) {
	switch n := n.(type) {
	case nil:
		return
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkDepth(c, depth, fn)
		}
		return
	case *parse.PipeNode:
		if n == nil {
			return
		}
	}
	fn(n, depth)
	switch n := n.(type) {
	case *parse.ActionNode:
		walkDepth(n.Pipe, depth, fn)
	case *parse.PipeNode:
		for _, v := range n.Decl {
			walkDepth(v, depth, fn)
		}
		for _, c := range n.Cmds {
			walkDepth(c, depth, fn)
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			walkDepth(a, depth, fn)
		}
	case *parse.ChainNode:
		walkDepth(n.Node, depth, fn)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, depth, fn)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, depth, fn)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, depth, fn)
	case *parse.TemplateNode:
		walkDepth(n.Pipe, depth, fn)
	}
}

func walkBranch(b *parse.BranchNode, depth int, fn func(parse.Node, int)) {
	walkDepth(b.Pipe, depth+1, fn)
	walkDepth(b.List, depth+1, fn)
	// {{else if}} and {{else with}} continue a chain rather than nest in it.
	if l := b.ElseList; l != nil && len(l.Nodes) == 1 {
		switch l.Nodes[0].(type) {
		case *parse.IfNode, *parse.WithNode:
			walkDepth(l, depth, fn)
			return
		}
	}
	walkDepth(b.ElseList, depth+1, fn)
}

// addSteps makes ranges pay for what they run. Before every {{range PIPE}} it plants
// {{if _sendonce_len (PIPE)}}{{end}}, which charges the length of what is about to
// be ranged over (a map's keys are sorted before the first iteration, and a
// {{break}} could otherwise make that free); at the head of the range body it plants
// {{if _sendonce_step N}}{{end}}, N being the body's size, so each iteration pays
// for the nodes it will run. An if with an empty body writes nothing, and
// html/template leaves its pipeline alone.
func addSteps(tree *parse.Tree) {
	if tree != nil {
		addStepsList(tree.Root)
	}
}

func addStepsList(l *parse.ListNode) {
	if l == nil {
		return
	}
	nodes := make([]parse.Node, 0, len(l.Nodes))
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.IfNode:
			addStepsList(n.List)
			addStepsList(n.ElseList)
		case *parse.WithNode:
			addStepsList(n.List)
			addStepsList(n.ElseList)
		case *parse.RangeNode:
			addStepsList(n.List)
			addStepsList(n.ElseList)
			size := 1
			walk(n.List, func(parse.Node, int) { size++ })
			if n.List == nil {
				n.List = &parse.ListNode{NodeType: parse.NodeList, Pos: n.Pos}
			}
			n.List.Nodes = append([]parse.Node{plant(stepFunc, strconv.Itoa(size), nil)}, n.List.Nodes...)
			pipe := n.Pipe.CopyPipe()
			pipe.Decl, pipe.IsAssign = nil, false
			nodes = append(nodes, plant(lenFunc, "0", pipe))
		}
		nodes = append(nodes, n)
	}
	l.Nodes = nodes
}

// plant parses {{if fn arg}}{{end}}, so the node is built exactly as the parser
// builds one, and puts pipe in place of arg when it is given.
func plant(fn, arg string, pipe *parse.PipeNode) parse.Node {
	t := texttemplate.Must(texttemplate.New("plant").Funcs(parseFuncs).Parse("{{if " + fn + " " + arg + "}}{{end}}"))
	n := t.Tree.Root.Nodes[0].(*parse.IfNode)
	if pipe != nil {
		n.Pipe.Cmds[0].Args[1] = pipe
	}
	return n
}

// mapSortSteps is what each key of a map costs when a range starts: text/template
// sorts the keys first (a stable sort through reflection, about 1 µs per key).
const mapSortSteps = 8

// length is what ranging over v costs before its first iteration.
func length(v any) int {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		return rv.Len() * mapSortSteps
	case reflect.Slice, reflect.Array, reflect.String, reflect.Chan:
		return rv.Len()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(max(rv.Int(), 0))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int(min(rv.Uint(), uint64(MaxSteps+1)))
	}
	return 0
}

// funcs are a renderer's functions: the step counter and the built-ins that
// return data-sized strings, charged to the same budget.
func (r *renderer) funcs() texttemplate.FuncMap {
	charged := func(f func(...any) string) func(...any) (string, error) {
		return func(args ...any) (string, error) {
			s := f(args...)
			return s, r.charge(1 + len(s)/bytesPerStep)
		}
	}
	return texttemplate.FuncMap{
		stepFunc:   func(n int) (bool, error) { return false, r.charge(n) },
		lenFunc:    func(v any) (bool, error) { return false, r.charge(length(v)) },
		"html":     charged(texttemplate.HTMLEscaper),
		"js":       charged(texttemplate.JSEscaper),
		"urlquery": charged(texttemplate.URLQueryEscaper),
		"print":    charged(fmt.Sprint),
		"println":  charged(fmt.Sprintln),
		"printf": func(format string, args ...any) (string, error) {
			s := fmt.Sprintf(format, args...)
			return s, r.charge(1 + len(s)/bytesPerStep)
		},
	}
}

func (r *renderer) charge(n int) error {
	r.steps -= n
	if r.steps < 0 {
		return errSteps
	}
	return nil
}

// limitWriter fails a write past its limit, which stops the template.
type limitWriter struct {
	w    *bytes.Buffer
	left int
}

// WriteString is Write without converting s (plain parts write strings).
func (l *limitWriter) WriteString(s string) (int, error) {
	if len(s) > l.left {
		l.left = -1
		return 0, errTooMuch
	}
	l.left -= len(s)
	return l.w.WriteString(s)
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		l.left = -1
		return 0, errTooMuch
	}
	l.left -= len(p)
	return l.w.Write(p)
}

// execError names the part and the limit a render ran into.
func execError(part int, err error) error {
	switch {
	case errors.Is(err, errTooMuch):
		return invalid(part, "renders more than %d bytes", maxOutput[part])
	case errors.Is(err, errSteps):
		return invalid(part, "runs more than %d steps (loops too long for this data)", MaxSteps)
	}
	return invalid(part, "does not execute: %s", clean(err))
}
