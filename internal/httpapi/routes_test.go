package httpapi_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce"
)

// TestRoutesMatchSpec holds routes.go and openapi.yaml to the same set of
// method + path pairs.
func TestRoutesMatchSpec(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var routed []string
	err := chi.Walk(e.handler.(chi.Routes), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routed = append(routed, method+" "+strings.TrimSuffix(route, "/"))
		return nil
	})
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(sendonce.OpenAPI)
	require.NoError(t, err)
	var specified []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			specified = append(specified, method+" "+path)
		}
	}
	sort.Strings(routed)
	sort.Strings(specified)
	require.Equal(t, specified, routed)
}
