package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAPIReferenceServed: GET /docs needs no key and answers the reference rendered
// from the spec, under a policy that runs no script.
func TestAPIReferenceServed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do("", http.MethodGet, "/docs", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, res.Header.Get("Content-Type"), "text/html")
	require.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'none'")
	require.Contains(t, string(res.Body), `id="approveCampaign"`)
	require.Contains(t, string(res.Body), `<code>/v1/campaigns/{id}/approve</code>`)
}
