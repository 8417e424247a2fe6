// Package apidoc renders the API reference, an HTML page, from openapi.yaml: every
// operation grouped by its tag, with its parameters, request body, responses and the
// schemas they name. The page is rendered once, when the server starts, from the
// same document the server validates requests against, so it cannot drift from the
// routes; it carries no script, and its one style block is allowed by its hash.
package apidoc

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Page is the rendered reference and the Content-Security-Policy to serve it with.
type Page struct {
	HTML []byte
	CSP  string
}

// ServeHTTP writes the page: no script, its one style block allowed by hash.
func (p Page) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", p.CSP)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(p.HTML)
}

type param struct {
	Name, In, Type, Description string
	Required                    bool
}

type field struct {
	Name, Type, Description string
	Required                bool
}

type response struct{ Code, Description, Schema string }

type operation struct {
	ID, Method, Path, Summary, Description, Body string
	Public                                       bool
	Params                                       []param
	Responses                                    []response
}

type section struct {
	Name, Description string
	Ops               []operation
}

type schema struct {
	Name, Description, Type string
	Fields                  []field
	Enum                    []string
}

const style = `body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#1b1f24}
code,pre{font:13px ui-monospace,monospace;background:#f3f4f6;padding:0 .2em}
.op{border:1px solid #d0d7de;border-radius:6px;padding:.5rem 1rem;margin:1rem 0}
.m{font-weight:700;text-transform:uppercase;margin-right:.5em}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;text-align:left;padding:.2em .4em;vertical-align:top}
nav li{margin:.1em 0}`

var page = template.Must(template.New("doc").Funcs(template.FuncMap{"anchor": anchor}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{.Title}} API reference</title><style>{{.Style}}</style></head>
<body><header><h1>{{.Title}} API reference <small>{{.Version}}</small></h1>
<p>{{.Description}}</p><p>This page is rendered from <a href="/openapi.yaml">openapi.yaml</a>, the contract the server validates every request against.</p></header>
<nav aria-label="Contents"><h2>Contents</h2><ul>{{range .Sections}}<li><a href="#tag-{{.Name | anchor}}">{{.Name}}</a> ({{len .Ops}})</li>{{end}}<li><a href="#schemas">Schemas</a></li></ul></nav>
<main>{{range .Sections}}<section id="tag-{{.Name | anchor}}"><h2>{{.Name}}</h2><p>{{.Description}}</p>
{{range .Ops}}<div class="op" id="{{.ID}}"><h3><span class="m">{{.Method}}</span><code>{{.Path}}</code> — {{.Summary}}</h3>
{{if .Description}}<p>{{.Description}}</p>{{end}}{{if .Public}}<p><em>No API key.</em></p>{{end}}
{{if .Params}}<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>description</th></tr>
{{range .Params}}<tr><td><code>{{.Name}}</code>{{if .Required}} (required){{end}}</td><td>{{.In}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>{{end}}</table>{{end}}
{{if .Body}}<h4>Request body</h4><p>{{.Body}}</p>{{end}}
<h4>Responses</h4><table>{{range .Responses}}<tr><td>{{.Code}}</td><td>{{.Description}}{{if .Schema}} — {{.Schema}}{{end}}</td></tr>{{end}}</table></div>
{{end}}</section>{{end}}
<section id="schemas"><h2>Schemas</h2>{{range .Schemas}}<div class="op" id="schema-{{.Name}}"><h3>{{.Name}}{{if .Type}} <small>{{.Type}}</small>{{end}}</h3>
{{if .Description}}<p>{{.Description}}</p>{{end}}{{if .Enum}}<p>One of: {{range $i, $e := .Enum}}{{if $i}}, {{end}}<code>{{$e}}</code>{{end}}</p>{{end}}
{{if .Fields}}<table><tr><th>field</th><th>type</th><th>description</th></tr>{{range .Fields}}<tr><td><code>{{.Name}}</code>{{if .Required}} (required){{end}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>{{end}}</table>{{end}}</div>
{{end}}</section></main></body></html>
`))

// Render builds the reference from an OpenAPI 3 document.
func Render(spec []byte) (Page, error) {
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		return Page{}, fmt.Errorf("apidoc: load the spec: %w", err)
	}
	byTag := map[string]*section{}
	var order []string
	for _, t := range doc.Tags {
		byTag[t.Name] = &section{Name: t.Name, Description: t.Description}
		order = append(order, t.Name)
	}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, path := range paths {
		item := doc.Paths.Value(path)
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			op := item.GetOperation(method)
			if op == nil {
				continue
			}
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			sec, ok := byTag[tag]
			if !ok {
				sec = &section{Name: tag}
				byTag[tag] = sec
				order = append(order, tag)
			}
			sec.Ops = append(sec.Ops, describe(method, path, item, op))
		}
	}
	data := struct {
		Title, Version, Description string
		Style                       template.CSS
		Sections                    []section
		Schemas                     []schema
	}{Style: template.CSS(style)}
	if doc.Info != nil {
		data.Title, data.Version, data.Description = doc.Info.Title, doc.Info.Version, doc.Info.Description
	}
	for _, name := range order {
		if len(byTag[name].Ops) > 0 {
			data.Sections = append(data.Sections, *byTag[name])
		}
	}
	if doc.Components != nil {
		names := make([]string, 0, len(doc.Components.Schemas))
		for n := range doc.Components.Schemas {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			data.Schemas = append(data.Schemas, describeSchema(n, doc.Components.Schemas[n]))
		}
	}
	var b bytes.Buffer
	if err := page.Execute(&b, data); err != nil {
		return Page{}, fmt.Errorf("apidoc: render: %w", err)
	}
	sum := sha256.Sum256([]byte(style))
	csp := "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
	return Page{HTML: b.Bytes(), CSP: csp}, nil
}

func anchor(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "-")) }

func describe(method, path string, item *openapi3.PathItem, op *openapi3.Operation) operation {
	o := operation{ID: op.OperationID, Method: method, Path: path, Summary: op.Summary, Description: op.Description,
		Public: op.Security != nil && len(*op.Security) == 0}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, ref := range list {
			if p := ref.Value; p != nil {
				o.Params = append(o.Params, param{Name: p.Name, In: p.In, Type: typeOf(p.Schema),
					Description: p.Description, Required: p.Required})
			}
		}
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		var kinds []string
		for ct, mt := range op.RequestBody.Value.Content {
			kinds = append(kinds, ct+": "+typeOf(mt.Schema))
		}
		sort.Strings(kinds)
		o.Body = strings.Join(kinds, "; ")
		if d := op.RequestBody.Value.Description; d != "" {
			o.Body += ". " + d
		}
	}
	if op.Responses != nil {
		codes := make([]string, 0, op.Responses.Len())
		for code := range op.Responses.Map() {
			codes = append(codes, code)
		}
		sort.Strings(codes)
		for _, code := range codes {
			ref := op.Responses.Value(code)
			r := response{Code: code}
			if ref.Value != nil {
				if ref.Value.Description != nil {
					r.Description = *ref.Value.Description
				}
				for _, mt := range ref.Value.Content {
					r.Schema = typeOf(mt.Schema)
					break
				}
			}
			o.Responses = append(o.Responses, r)
		}
	}
	return o
}

// typeOf names a schema as a reader wants it: the component it refers to, or its
// type (an array of what).
func typeOf(ref *openapi3.SchemaRef) string {
	if ref == nil {
		return ""
	}
	if ref.Ref != "" {
		return ref.Ref[strings.LastIndex(ref.Ref, "/")+1:]
	}
	s := ref.Value
	if s == nil || s.Type == nil {
		return "any"
	}
	switch {
	case s.Type.Is("array"):
		return "array of " + typeOf(s.Items)
	case s.Format != "":
		return strings.Join(s.Type.Slice(), "|") + " (" + s.Format + ")"
	}
	return strings.Join(s.Type.Slice(), "|")
}

func describeSchema(name string, ref *openapi3.SchemaRef) schema {
	out := schema{Name: name}
	s := ref.Value
	if s == nil {
		return out
	}
	out.Description = s.Description
	out.Type = typeOf(&openapi3.SchemaRef{Value: s})
	for _, e := range s.Enum {
		out.Enum = append(out.Enum, fmt.Sprint(e))
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := s.Properties[n]
		d := ""
		if p.Value != nil {
			d = p.Value.Description
		}
		out.Fields = append(out.Fields, field{Name: n, Type: typeOf(p), Description: d, Required: required[n]})
	}
	return out
}
