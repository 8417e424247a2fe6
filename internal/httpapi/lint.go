package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/contentlint"
)

// lintContent answers what the lint finds in an email's content: advice shown
// before approval, never a refusal.
func (s *Server) lintContent(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.LintRequest](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	c := contentlint.Content{Kind: contentlint.Campaign, Subject: in.Subject, HTML: deref(in.Html), Text: deref(in.Text)}
	if in.Kind != nil {
		c.Kind = contentlint.Kind(*in.Kind)
	}
	out := api.LintResult{Findings: []api.LintFinding{}}
	for _, f := range contentlint.Lint(c) {
		lf := api.LintFinding{Rule: f.Rule, Severity: api.LintFindingSeverity(f.Severity), Field: f.Field, Message: f.Message}
		if f.Excerpt != "" {
			e := f.Excerpt
			lf.Excerpt = &e
		}
		out.Findings = append(out.Findings, lf)
	}
	return encode(w, http.StatusOK, out)
}
