package loadtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The recorder keeps 503s apart: they are counted as shed, not as errors, and
// stay out of the accepted requests' latencies; other 4xx/5xx and transport
// errors are errors.
func TestLoadRecorderSeparatesShed(t *testing.T) {
	t.Parallel()
	rec := newLoadRecorder()
	at := time.Unix(1_700_000_000, 0)
	add := func(method, url string, code uint16, latency time.Duration) {
		rec.add(&vegeta.Result{Method: method, URL: url, Code: code, Latency: latency, Timestamp: at})
	}
	add("GET", "http://x/v1/subscribers?limit=50", 200, 10*time.Millisecond)
	add("GET", "http://x/v1/campaigns/7/stats", 200, 20*time.Millisecond)
	add("GET", "http://x/v1/campaigns/7/stats", 503, time.Second)
	add("POST", "http://x/v1/subscribers", 201, 30*time.Millisecond)
	add("POST", "http://x/v1/subscribers", 503, time.Second)
	add("POST", "http://x/v1/subscribers", 500, 40*time.Millisecond)
	add("GET", "http://x/v1/subscribers?limit=50", 0, 50*time.Millisecond)
	r := rec.result()

	byName := map[string]LoadKind{}
	for _, k := range r.Kinds {
		byName[k.Name] = k
	}
	require.EqualValues(t, 2, byName["list"].Requests)
	require.EqualValues(t, 1, byName["list"].Errors, "a transport error")
	require.EqualValues(t, 1, byName["stats"].Requests)
	require.EqualValues(t, 1, byName["stats"].Shed)
	require.Zero(t, byName["stats"].Errors, "a 503 is shed, not an error")
	require.EqualValues(t, 2, byName["create"].Requests)
	require.EqualValues(t, 1, byName["create"].Errors, "a 500")
	require.EqualValues(t, 1, byName["create"].Shed)
	require.EqualValues(t, 5, r.Accepted.Requests)
	require.Less(t, r.Accepted.P99, time.Second, "shed answers are not in the accepted latencies")
	require.EqualValues(t, 2, r.Shed.Requests)
}

// A closed-loop client answered 503 waits the Retry-After (here longer than the
// run) before it sends again, unless told to ignore it.
func TestClosedLoopHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	o := LoadOptions{BaseURL: srv.URL, APIKey: "k", CampaignID: 1, Clients: 3, Duration: time.Second}
	res, err := Load(context.Background(), o)
	require.NoError(t, err)
	require.LessOrEqual(t, hits.Load(), int64(3), "each client sent once and waited")
	require.EqualValues(t, hits.Load(), res.Shed.Requests)
	require.Zero(t, res.Accepted.Requests)

	hits.Store(0)
	o.IgnoreRetryAfter = true
	res, err = Load(context.Background(), o)
	require.NoError(t, err)
	require.Greater(t, hits.Load(), int64(3), "clients that ignore Retry-After send again at once")
	require.EqualValues(t, hits.Load(), res.Shed.Requests)
}
