package sink

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func post(t *testing.T, url, key string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

func TestHTTPSinkKeys(t *testing.T) {
	t.Parallel()
	s := NewHTTP(HTTPOptions{KeepDeliveries: true})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)

	require.Equal(t, http.StatusBadRequest, post(t, srv.URL, ""))
	require.Equal(t, http.StatusOK, post(t, srv.URL, "k1"))
	// The IETF draft's quoted form names the same key.
	require.Equal(t, http.StatusOK, post(t, srv.URL, `"k1"`))
	require.Equal(t, http.StatusOK, post(t, srv.URL, "k2"))
	st, err := FetchHTTPStats(context.Background(), srv.URL)
	require.NoError(t, err)
	require.Equal(t, HTTPStats{RawAttempts: 4, Unique: 2, Replays: 1}, st)
	require.Len(t, s.Deliveries(), 2)
}

func TestHTTPSinkCountsASecondAccept(t *testing.T) {
	t.Parallel()
	// Dedup makes a second accept impossible through ServeHTTP; the counter must
	// still see one if accept were ever reached twice.
	s := NewHTTP(HTTPOptions{})
	s.accept("k", nil, nil)
	s.accept("k", nil, nil)
	require.Equal(t, HTTPStats{Unique: 1, Duplicates: 1}, s.Stats())
}

func TestHTTPSinkFailuresAreSeeded(t *testing.T) {
	t.Parallel()
	run := func() HTTPStats {
		s := NewHTTP(HTTPOptions{FailRate: 0.3, Seed: 42})
		srv := httptest.NewServer(s)
		defer srv.Close()
		for i := range 100 {
			post(t, srv.URL, "k"+strings.Repeat("x", i))
		}
		return s.Stats()
	}
	a, b := run(), run()
	require.Equal(t, a, b)
	require.Greater(t, a.Failed, int64(10))
	require.Equal(t, int64(100), a.Failed+a.Unique)
}

func TestSMTPSinkRatesAreSeeded(t *testing.T) {
	t.Parallel()
	faults := func() []Fault {
		s := NewSMTP(SMTPOptions{TempRate: 0.1, PermRate: 0.1, DropRate: 0.1, Seed: 7})
		var out []Fault
		for range 200 {
			out = append(out, s.fault("x@example.org"))
		}
		return out
	}
	a := faults()
	require.Equal(t, a, faults())
	seen := map[Fault]int{}
	for _, f := range a {
		seen[f]++
	}
	for _, f := range []Fault{Deliver, RcptTemp, RcptPerm, DropAfterData} {
		require.Positive(t, seen[f], "fault %d never drawn", f)
	}
}

func TestHTTPSinkRefusesUntilTheRuleGoes(t *testing.T) {
	t.Parallel()
	s := NewHTTP(HTTPOptions{})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	postTo := func(key, to string) int {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"to":"`+to+`"}`))
		require.NoError(t, err)
		req.Header.Set("Idempotency-Key", key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	s.Refuse(func(body []byte) bool { return strings.Contains(string(body), "no@") })
	require.Equal(t, http.StatusUnprocessableEntity, postTo("k1", "no@example.com"))
	require.Equal(t, http.StatusOK, postTo("k2", "yes@example.com"))
	require.Equal(t, http.StatusUnprocessableEntity, postTo("k1", "no@example.com"))
	s.Refuse(nil)
	// The refused key was never accepted: now it is, once.
	require.Equal(t, http.StatusOK, postTo("k1", "no@example.com"))
	require.Equal(t, http.StatusOK, postTo("k1", "no@example.com"))
	require.Equal(t, HTTPStats{RawAttempts: 5, Unique: 2, Replays: 1, Refused: 2}, s.Stats())
	require.Equal(t, map[string]int{"k1": 1, "k2": 1}, s.AcceptCounts())
}

// An SMTP sink closed right after Listen, before its serving goroutine ran, stops
// serving all the same (the package's TestMain fails on a goroutine left
// accepting).
func TestSMTPCloseRightAfterListen(t *testing.T) {
	t.Parallel()
	for range 200 {
		s := NewSMTP(SMTPOptions{})
		_, err := s.Listen("127.0.0.1:0")
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
}
