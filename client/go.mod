module github.com/sendonce/sendonce/client

// 1.24 is the oldest Go the generated code's runtime (github.com/oapi-codegen/runtime)
// supports; range-over-func iterators need 1.23.
go 1.24

require (
	github.com/oapi-codegen/runtime v1.3.1
	github.com/stretchr/testify v1.9.0
	go.yaml.in/yaml/v3 v3.0.4
)

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
