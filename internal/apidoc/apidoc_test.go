package apidoc_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	sendonce "github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/internal/apidoc"
)

// TestReferenceCoversTheSpec: the rendered reference names every operation of
// openapi.yaml (by its anchor, method and path) and every component schema, parses as
// HTML, and carries no script.
func TestReferenceCoversTheSpec(t *testing.T) {
	t.Parallel()
	p, err := apidoc.Render(sendonce.OpenAPI)
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(sendonce.OpenAPI)
	require.NoError(t, err)
	page := string(p.HTML)
	ops := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops++
			require.Contains(t, page, `id="`+op.OperationID+`"`, "%s %s", method, path)
			require.Contains(t, page, "<code>"+html.EscapeString(path)+"</code>", "%s %s", method, path)
		}
	}
	require.Greater(t, ops, 80)
	for name := range doc.Components.Schemas {
		require.Contains(t, page, `id="schema-`+name+`"`)
	}
	_, err = html.Parse(bytes.NewReader(p.HTML))
	require.NoError(t, err)
	require.NotContains(t, strings.ToLower(page), "<script")
	require.Contains(t, p.CSP, "default-src 'none'")
	// The one style block is allowed by its hash: the page as served must match it.
	style := page[strings.Index(page, "<style>")+len("<style>") : strings.Index(page, "</style>")]
	sum := sha256.Sum256([]byte(style))
	require.Contains(t, p.CSP, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
}
