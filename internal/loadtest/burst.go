package loadtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// BurstResult is what one burst of concurrent requests saw: how many were served
// (any answer but 503), how many shed, how many failed otherwise, and the
// latencies of the served ones.
type BurstResult struct {
	Served, Shed, Errors int
	P50, P99, Max        time.Duration
}

// Burst sends n requests at once (each on its own connection, opened before the
// burst so that connecting is not measured), POST /v1/events/stream-tokens with
// key — a small authenticated write, what a client's fan-out or a page of
// dashboards opening their streams sends — and returns what they saw.
func Burst(ctx context.Context, base, key string, n int) (BurstResult, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	do := func() (int, time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/events/stream-tokens", nil)
		if err != nil {
			return 0, 0, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, time.Since(start), nil
	}
	// Warm n connections: n health checks at once leave n idle keep-alive connections.
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil); err == nil {
				if resp, err := client.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	wg.Wait()

	var mu sync.Mutex
	var out BurstResult
	var lat []time.Duration
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			code, d, err := do()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil || code >= 400 && code != http.StatusServiceUnavailable:
				out.Errors++
			case code == http.StatusServiceUnavailable:
				out.Shed++
			default:
				out.Served++
				lat = append(lat, d)
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return BurstResult{}, err
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		out.P50, out.P99, out.Max = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
	}
	return out, nil
}

// PrintBurst writes one line for a burst.
func PrintBurst(out io.Writer, i, n int, r BurstResult) {
	fmt.Fprintf(out, "loadtest burst %d: requests=%d served=%d shed=%d errors=%d served_p50_ms=%.1f served_p99_ms=%.1f served_max_ms=%.1f\n",
		i, n, r.Served, r.Shed, r.Errors, ms(r.P50), ms(r.P99), ms(r.Max))
}
