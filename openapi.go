// Package sendonce holds the HTTP contract, openapi.yaml, for embedding in the
// binary (GET /openapi.yaml) and for the tests that hold the router to it.
package sendonce

import _ "embed"

// OpenAPI is the contents of openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPI []byte
