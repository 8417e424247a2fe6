package sendonce

import (
	"context"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// TestOpenAPIValid is the spec lint: the document loads, every $ref resolves, and
// kin-openapi's validation (schemas, defaults, examples, path parameters) passes.
func TestOpenAPIValid(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background(), openapi3.EnableSchemaDefaultsValidation(),
		openapi3.EnableExamplesValidation()))
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			require.NotEmpty(t, op.OperationID, "%s %s has no operationId", method, path)
		}
	}
}
