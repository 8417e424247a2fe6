package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
)

// Linter lints an email's content (contentlint.API).
type Linter interface {
	Lint(in api.LintRequest) api.LintResult
}

// lintContent answers what the lint finds in an email's content: advice shown
// before approval, never a refusal.
func (s *Server) lintContent(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.LintRequest](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, s.Lint.Lint(in))
}
