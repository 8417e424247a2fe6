package provider_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// TestHTTPRetriesUntilSentDeliverOnce resends every temporary or ambiguous failure
// with the same job id, as the executor does for an idempotent provider: each
// key ends up delivered exactly once despite injected 503s and dropped answers.
func TestHTTPRetriesUntilSentDeliverOnce(t *testing.T) {
	t.Parallel()
	s := sink.NewHTTP(sink.HTTPOptions{FailRate: 0.1, DropRate: 0.1, Seed: 3})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL})
	require.NoError(t, err)
	const n = 1000
	jobs := make(chan int)
	// Workers never assert (a failed require ends only its own goroutine, and the
	// feeding loop would then block): they report, and the test goroutine asserts.
	var mu sync.Mutex
	var permanent []error
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for j := range jobs {
				m := testMessage(fmt.Sprintf("campaign:1:%d", j))
				for {
					_, err := p.Send(context.Background(), m)
					if err == nil {
						break
					}
					if provider.ClassOf(err) == provider.Permanent {
						mu.Lock()
						permanent = append(permanent, err)
						mu.Unlock()
						break
					}
				}
			}
		})
	}
	for j := range n {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	require.Empty(t, permanent, "no failure may be permanent")
	st := s.Stats()
	require.EqualValues(t, n, st.Unique)
	require.Zero(t, st.Duplicates)
	require.Positive(t, st.Failed)
	require.Positive(t, st.Dropped)
	require.Greater(t, st.RawAttempts, int64(n))
}

func TestSMTPPoolUsesItsConnectionsConcurrently(t *testing.T) {
	t.Parallel()
	p, s := setupSMTP(t, 4, sink.SMTPOptions{})
	errs := make(chan error, 8*50)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				_, err := p.Send(context.Background(), testMessage(fmt.Sprintf("campaign:2:%d", g*1000+i)))
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	st := s.Stats()
	require.EqualValues(t, 400, st.Unique)
	require.Zero(t, st.Duplicates)
	require.LessOrEqual(t, st.Connections, int64(4), "never more connections than the pool size")
}
