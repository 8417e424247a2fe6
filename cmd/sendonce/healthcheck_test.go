package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHealthURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ addr, arg, want string }{
		{":8080", "", "http://127.0.0.1:8080/healthz"},
		{"0.0.0.0:9000", "", "http://127.0.0.1:9000/healthz"},
		{"[::]:8080", "", "http://127.0.0.1:8080/healthz"},
		{"10.1.2.3:8080", "", "http://10.1.2.3:8080/healthz"},
		{":8080", "api:8081", "http://api:8081/healthz"},
		{":8080", "http://x:1/readyz", "http://x:1/readyz"},
	} {
		var args []string
		if c.arg != "" {
			args = []string{c.arg}
		}
		got, err := healthURL(c.addr, args)
		require.NoError(t, err, c)
		require.Equal(t, c.want, got, c)
	}
	_, err := healthURL("nonsense", nil)
	require.Error(t, err)
}

// The image's HEALTHCHECK runs `sendonce healthcheck`: it must fail on anything but 200,
// and on a refused connection.
func TestHealthcheckFailsUnlessOK(t *testing.T) {
	t.Parallel()
	var status atomic.Int32
	status.Store(http.StatusServiceUnavailable)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	require.ErrorContains(t, healthcheck(context.Background(), addr, nil, io.Discard), "503")
	status.Store(http.StatusOK)
	require.NoError(t, healthcheck(context.Background(), addr, nil, io.Discard))
	srv.Close()
	require.Error(t, healthcheck(context.Background(), addr, nil, io.Discard))
}
