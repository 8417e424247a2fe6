// Package sdktest tests the Go SDK (the module in client/, which this module
// requires through a replace) against the real service: `sendonce dev` on a
// throwaway database (internal/servicetest). The SDK's own module cannot import the
// service's internal packages, so its tests that need a service live here.
package sdktest
