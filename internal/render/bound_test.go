package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/render"
)

// requireInvalid asserts err is a 422-class error naming pointer, with detail in its message.
func requireInvalid(t *testing.T, err error, pointer, detail string) {
	t.Helper()
	require.Error(t, err)
	require.True(t, apperr.Is(err, apperr.Invalid), "%v", err)
	require.Equal(t, pointer, err.(*apperr.Error).Fields[0].Pointer, "%v", err)
	require.Contains(t, err.Error(), detail)
}

// Templates over a static limit are refused when saved, naming the template.
func TestValidateRefusesUnboundedTemplates(t *testing.T) {
	t.Parallel()
	nest := strings.Repeat("{{if .Name}}", render.MaxNesting+1) + strings.Repeat("{{end}}", render.MaxNesting+1)
	for _, tc := range []struct{ name, tpl, detail string }{
		{"no-output loop", `{{range 100000000}}{{end}}x`, "range over 100000000"},
		{"printf loop", `{{range 3000000}}{{printf "%0100d" 1}}{{end}}`, "range over 3000000"},
		{"range over a float literal", `{{range 1e9}}{{end}}`, "range over 1000000000"},
		{"huge printf width", `{{printf "%0999999999d" 1}}`, "widths and precisions"},
		{"huge printf precision", `{{printf "%.999999999f" 1.0}}`, "widths and precisions"},
		{"star width", `{{printf "%*d" 1000000000 1}}`, "'*'"},
		{"computed format", `{{printf .Name 1}}`, "literal format"},
		{"piped format", `{{"%0999999999d" | printf}}`, "literal format"},
		{"recursion via define", `{{define "a"}}{{template "a" .}}{{template "a" .}}{{end}}{{template "a" .}}`, "define"},
		{"block", `{{block "b" .}}x{{end}}`, "define"},
		{"call", `{{call .Name}}`, `"call"`},
		{"planted step name", `{{_sendonce_step 1}}`, `"_sendonce_step"`},
		{"planted len name", `{{if _sendonce_len 1}}{{end}}`, `"_sendonce_len"`},
		{"nesting", nest, "nested more than"},
		{"too many nodes", strings.Repeat("{{.Name}}", render.MaxNodes), "nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireInvalid(t, render.Validate("s", "", tc.tpl), "/text_template", tc.detail)
			requireInvalid(t, render.Validate("s", tc.tpl, ""), "/html_template", tc.detail)
			requireInvalid(t, render.Validate(tc.tpl, "", "body"), "/subject", tc.detail)
		})
	}
}

func TestValidateAcceptsOrdinaryTemplates(t *testing.T) {
	t.Parallel()
	elseIfs := "{{if eq .Name \"a\"}}a" + strings.Repeat("{{else if eq .Name \"b\"}}b", 30) + "{{end}}"
	for _, tpl := range []string{
		"Hello {{.Name}}",
		`{{range 1000}}.{{end}}`,
		`{{printf "%05.2f %-20s %v" 3.14159 .Name .Email}}`,
		`{{with .Attributes.items}}{{range $i, $e := .}}{{if $i}}, {{end}}{{$e}}{{end}}{{end}}`,
		elseIfs,
		`{{html .Name}} {{js .Name}} {{urlquery .Name}} {{len .Name}} {{index .Attributes "x"}} {{slice .Name 1}}`,
	} {
		require.NoError(t, render.Validate("s", "", tpl), tpl)
	}
}

func renderBounded(t *testing.T, tpl, attrs string) error {
	t.Helper()
	p := prepare(t, render.Campaign{FromEmail: "n@example.com", Subject: "s", Text: tpl})
	_, err := p.Build(render.Recipient{JobID: "campaign:1:2", Email: "a@example.org", Name: "Ada",
		Attributes: []byte(attrs)}, render.Links{})
	return err
}

func list(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprint(i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// What the static check cannot see (loops over data) stops at the step budget or
// the output limit when a recipient's data drives it.
func TestRenderStopsAtTheLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1000)
	keys := make([]string, 3000)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d":1`, i)
	}
	for _, tc := range []struct{ name, tpl, attrs, detail string }{
		{"nested ranges over attributes",
			`{{with .Attributes.l}}{{range .}}{{range $.Attributes.l}}{{end}}{{end}}{{end}}`,
			`{"l":` + list(1000) + `}`, "steps"},
		{"range over literals nested", `{{range 1000}}{{range 1000}}{{end}}{{end}}`, `{}`, "steps"},
		{"range over len of data", `{{range len .Attributes.s}}{{end}}`, `{"s":"` + strings.Repeat("y", 30000) + `"}`, "steps"},
		{"break after a map sort", `{{range 1000}}{{range $.Attributes.m}}{{break}}{{end}}{{end}}`,
			`{"m":{` + strings.Join(keys, ",") + `}}`, "steps"},
		{"printf of data in a condition", `{{range 1000}}{{if printf "%s%s%s" $.Attributes.b $.Attributes.b $.Attributes.b}}{{end}}{{end}}`,
			`{"b":"` + big + `"}`, "steps"},
		{"html of data in a variable", `{{range 1000}}{{$x := html $.Attributes.b}}{{end}}`, `{"b":"` + strings.Repeat("<", 1000) + `"}`, "steps"},
		{"output", `{{range 1000}}{{$.Attributes.b}}{{end}}`, `{"b":"` + big + `"}`, "more than 524288 bytes"},
		{"attributes too large", `{{.Attributes.b}}`, `{"b":"` + strings.Repeat("z", render.MaxAttributeBytes) + `"}`, "attributes exceed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := renderBounded(t, tc.tpl, tc.attrs)
			ptr := "/text_template"
			if tc.name == "attributes too large" {
				ptr = "/attributes"
			}
			requireInvalid(t, err, ptr, tc.detail)
		})
	}
	// The same templates with small data render.
	require.NoError(t, renderBounded(t, `{{with .Attributes.l}}{{range .}}{{range $.Attributes.l}}{{end}}{{end}}{{end}}x`, `{"l":`+list(50)+`}`))
	require.NoError(t, renderBounded(t, `{{range 100}}{{$.Attributes.b}}{{end}}`, `{"b":"`+big+`"}`))
}

// The subject has its own, smaller output limit.
func TestSubjectOutputLimit(t *testing.T) {
	t.Parallel()
	p := prepare(t, render.Campaign{FromEmail: "n@example.com", Subject: `{{range 1000}}{{$.Name}}{{end}}`, Text: "x"})
	_, err := p.Build(render.Recipient{JobID: "j", Email: "a@example.org", Name: strings.Repeat("n", 10)}, render.Links{})
	requireInvalid(t, err, "/subject", "more than 4096 bytes")
}
