// Package api holds the Go wire types generated from openapi.yaml by oapi-codegen
// (`make generate`). Nothing here is written by hand except this file.
package api
