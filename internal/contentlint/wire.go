package contentlint

import (
	"github.com/sendonce/sendonce/api"

	"github.com/sendonce/sendonce/internal/optional"
)

// API is Lint in the wire types of api/, as the HTTP API calls it.
type API struct{}

// Lint answers what Lint finds in the content of in.
func (API) Lint(in api.LintRequest) api.LintResult {
	c := Content{Kind: Campaign, Subject: in.Subject, HTML: optional.Value(in.Html), Text: optional.Value(in.Text)}
	if in.Kind != nil {
		c.Kind = Kind(*in.Kind)
	}
	out := api.LintResult{Findings: []api.LintFinding{}}
	for _, f := range Lint(c) {
		lf := api.LintFinding{Rule: f.Rule, Severity: api.LintFindingSeverity(f.Severity), Field: f.Field, Message: f.Message}
		if f.Excerpt != "" {
			e := f.Excerpt
			lf.Excerpt = &e
		}
		out.Findings = append(out.Findings, lf)
	}
	return out
}
