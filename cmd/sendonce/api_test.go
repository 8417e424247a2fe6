package main

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
)

// The API's tests build the server through httpapitest, which copies the
// configuration into httpapi.Options with a copy of its own: the two copies must
// agree on every field, and every field must be copied (none left zero by a
// configuration that sets them all).
func TestAPIOptionsAsTestsBuildThem(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Dev = true
	cfg.DashboardOff = true
	cfg.MetricsAddr = "127.0.0.1:9090"
	cfg.CORSOrigins = []string{"https://app.example.com"}
	cfg.TrustedProxies = []string{"10.0.0.0/8"}
	cfg.PublicURL = "https://mail.example.com"
	cfg.DomainCheck = "warn"
	got := apiOptions(cfg)
	require.Equal(t, httpapitest.Options(cfg), got)
	v := reflect.ValueOf(got)
	for i := range v.NumField() {
		require.False(t, v.Field(i).IsZero(), "httpapi.Options.%s is not copied from the configuration", v.Type().Field(i).Name)
	}
}
