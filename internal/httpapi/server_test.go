package httpapi_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
)

// NewServer builds no service: a Deps without one is refused at start-up, naming
// the field, instead of answering 500 (or building its own) on the first request.
func TestNewServerRefusesAMissingService(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	d := httpapitest.Deps(t, dbtest.New(t), cfg)
	_, err := httpapi.NewServer(d, httpapitest.Options(cfg))
	require.NoError(t, err)

	d.Tracking, d.Optin = nil, nil
	_, err = httpapi.NewServer(d, httpapitest.Options(cfg))
	require.EqualError(t, err, "httpapi: Deps without Optin, Tracking")

	_, err = httpapi.NewServer(httpapi.Deps{}, httpapi.Options{})
	require.ErrorContains(t, err, "Accounts")
}
