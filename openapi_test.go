package sendonce

import (
	"context"
	"strings"
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

// TestOpenAPIProblemResponses: every operation declares the problems it can answer,
// not only `default`, so generated clients and Postman know them: 401 and 429 (with
// Retry-After) on every operation behind an API key, 404 on every one with a path id,
// 413, 415 and 422 on every one with a body, 409 and Idempotency-Key on every tenant
// POST, 422 on every one with parameters the spec checks, and 503 (with Retry-After)
// on every one under the API's in-flight bound (behind an API key, and the
// dashboard's session).
func TestOpenAPIProblemResponses(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	require.NoError(t, err)
	has := func(op *openapi3.Operation, code string) bool { return op.Responses.Value(code) != nil }
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			authed := op.Security == nil // the document's bearerAuth applies
			params := append(openapi3.Parameters{}, item.Parameters...)
			params = append(params, op.Parameters...)
			var pathID, query, idemKey bool
			for _, p := range params {
				switch {
				case p.Value.In == "path" && p.Value.Name != "token" && p.Value.Name != "source":
					pathID = true
				case p.Value.In == "query":
					query = true
				case p.Value.Name == "Idempotency-Key":
					idemKey = true
				}
			}
			if authed {
				require.True(t, has(op, "401"), "%s: 401", name)
				require.True(t, has(op, "429"), "%s: 429", name)
				require.NotNil(t, op.Responses.Value("429").Value.Headers["Retry-After"], "%s: 429 without Retry-After", name)
				require.True(t, has(op, "default"), "%s: default (500, 503)", name)
			}
			if authed || path == "/v1/session" {
				require.True(t, has(op, "503"), "%s: 503 (shed past SENDONCE_API_MAX_IN_FLIGHT)", name)
				require.NotNil(t, op.Responses.Value("503").Value.Headers["Retry-After"], "%s: 503 without Retry-After", name)
			}
			if authed && pathID {
				require.True(t, has(op, "404"), "%s: 404", name)
			}
			if authed && (pathID || query) {
				require.True(t, has(op, "422"), "%s: 422 for its parameters", name)
			}
			if op.RequestBody != nil && strings.HasPrefix(path, "/v1/") {
				for _, code := range []string{"413", "415", "422"} {
					require.True(t, has(op, code), "%s: %s", name, code)
				}
			}
			// x-not-idempotent names why a POST cannot honour Idempotency-Key (its
			// answer holds a secret that no response store may keep).
			if _, reason := op.Extensions["x-not-idempotent"]; authed && method == "POST" && !reason {
				require.True(t, idemKey, "%s: Idempotency-Key", name)
				require.True(t, has(op, "409"), "%s: 409 (key in progress)", name)
			}
		}
	}
}

// TestOpenAPIWritesDocument403: every authenticated /v1 operation that is not a GET
// lists 403 (Forbidden): a read-only API key, or a session cookie without its CSRF
// token, is refused before anything runs.
func TestOpenAPIWritesDocument403(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	require.NoError(t, err)
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if method == "GET" || op.Security != nil || !strings.HasPrefix(path, "/v1/") || path == "/v1/session" {
				continue
			}
			require.NotNil(t, op.Responses.Value("403"), "%s %s: 403 (read-only key, CSRF)", method, path)
		}
	}
}
