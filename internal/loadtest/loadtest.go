// Package loadtest is the API load test of `sendonce-harness loadtest` (`make loadtest`):
// vegeta clients against a running service while it sends a campaign. It is a
// harness: the product binary does not carry it (nor vegeta).
package loadtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/sendonce/sendonce/internal/backoff"
)

// LoadOptions configure the API load test.
type LoadOptions struct {
	BaseURL    string        // http://host:port of a running service
	APIKey     string        // a key of the account that owns CampaignID
	CampaignID int64         // whose stats the readers poll
	Clients    int           // concurrent clients; default 200
	Duration   time.Duration // default 60s
	// Rate is the total requests per second, spread over at most Clients in-flight
	// requests (vegeta's open model: latency is service time, not time queued behind
	// the other clients). 0: closed loop, every client sends its next request as soon
	// as its last one is answered, which measures saturation.
	Rate int
	// IgnoreRetryAfter makes closed-loop clients send again at once after a 503,
	// as a client that ignores the server's Retry-After would; by default they wait
	// what it asks, as the Go SDK does.
	IgnoreRetryAfter bool
}

// LoadKind is what one kind of request saw. Requests, PerSec and the latencies are
// of the accepted requests (every answer but 503); the 503s the API shed are in
// Shed. Errors counts transport errors and the 4xx/5xx answers other than 503.
type LoadKind struct {
	Name     string
	Requests uint64
	Errors   uint64
	PerSec   float64
	P50, P99 time.Duration
	Codes    map[string]int
	Shed     uint64
}

// LoadResult is the whole load: each kind, every accepted request together, and
// the shed ones (503) with how fast they were answered.
type LoadResult struct {
	Kinds    []LoadKind
	Accepted LoadKind
	Shed     LoadKind
}

// The request mix, one slot per request in a round: reads are what a dashboard
// does most, writes are subscribers signing up while the campaign goes out.
var loadMix = []string{"list", "stats", "create", "list", "stats"}

var loadKinds = []string{"list", "stats", "create"}

// loadRecorder sorts each answer into its kind's accepted metrics or the shed ones.
type loadRecorder struct {
	mu       sync.Mutex
	accepted map[string]*vegeta.Metrics
	all      vegeta.Metrics
	shed     vegeta.Metrics
	shedBy   map[string]uint64
}

func newLoadRecorder() *loadRecorder {
	r := &loadRecorder{accepted: map[string]*vegeta.Metrics{}, shedBy: map[string]uint64{}}
	for _, k := range loadKinds {
		r.accepted[k] = &vegeta.Metrics{}
	}
	return r
}

func (r *loadRecorder) add(res *vegeta.Result) {
	kind := kindOf(res)
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.Code == http.StatusServiceUnavailable {
		r.shed.Add(res)
		r.shedBy[kind]++
		return
	}
	r.accepted[kind].Add(res)
	r.all.Add(res)
}

func (r *loadRecorder) result() LoadResult {
	summary := func(name string, m *vegeta.Metrics) LoadKind {
		m.Close()
		errs := uint64(0)
		for code, n := range m.StatusCodes {
			if code == "0" || code >= "400" && code != "503" {
				errs += uint64(n)
			}
		}
		return LoadKind{Name: name, Requests: m.Requests, Errors: errs, PerSec: m.Rate,
			P50: m.Latencies.P50, P99: m.Latencies.P99, Codes: m.StatusCodes, Shed: r.shedBy[name]}
	}
	var out LoadResult
	for _, k := range loadKinds {
		out.Kinds = append(out.Kinds, summary(k, r.accepted[k]))
	}
	out.Accepted = summary("accepted", &r.all)
	out.Shed = summary("shed", &r.shed)
	out.Shed.Shed = out.Shed.Requests
	return out
}

// Load drives up to Clients concurrent clients through the mix for Duration, at
// Rate (vegeta) or closed loop, and returns the figures per kind.
func Load(ctx context.Context, o LoadOptions) (LoadResult, error) {
	if o.Clients <= 0 {
		o.Clients = 200
	}
	if o.Duration <= 0 {
		o.Duration = 60 * time.Second
	}
	hdr := http.Header{}
	hdr.Set("Authorization", "Bearer "+o.APIKey)
	jsonHdr := hdr.Clone()
	jsonHdr.Set("Content-Type", "application/json")
	run := time.Now().UnixNano()
	var seq atomic.Uint64
	targeter := func(t *vegeta.Target) error {
		n := seq.Add(1)
		switch loadMix[n%uint64(len(loadMix))] {
		case "list":
			*t = vegeta.Target{Method: http.MethodGet, URL: o.BaseURL + "/v1/subscribers?limit=50", Header: hdr}
		case "stats":
			*t = vegeta.Target{Method: http.MethodGet, URL: fmt.Sprintf("%s/v1/campaigns/%d/stats", o.BaseURL, o.CampaignID), Header: hdr}
		default:
			body := fmt.Sprintf(`{"email":"load-%d-%d@example.com","name":"Load %d","status":"confirmed"}`, run, n, n)
			*t = vegeta.Target{Method: http.MethodPost, URL: o.BaseURL + "/v1/subscribers", Header: jsonHdr, Body: []byte(body)}
		}
		return nil
	}
	rec := newLoadRecorder()
	if o.Rate == 0 {
		closedLoop(ctx, o, targeter, rec)
	} else {
		workers := min(uint64(o.Clients), 10) // vegeta adds workers up to MaxWorkers as the rate needs
		atk := vegeta.NewAttacker(
			vegeta.Workers(workers), vegeta.MaxWorkers(uint64(o.Clients)),
			vegeta.Connections(o.Clients), vegeta.MaxConnections(o.Clients),
			vegeta.KeepAlive(true), vegeta.Timeout(30*time.Second), vegeta.MaxBody(0),
		)
		stop := context.AfterFunc(ctx, func() { atk.Stop() })
		defer stop()
		for res := range atk.Attack(targeter, vegeta.Rate{Freq: o.Rate, Per: time.Second}, o.Duration, "load") {
			rec.add(res)
		}
	}
	if err := ctx.Err(); err != nil {
		return LoadResult{}, err
	}
	return rec.result(), nil
}

// closedLoop runs Clients clients, each sending its next request when its last is
// answered, until Duration has passed. A client answered 503 waits the answer's
// Retry-After first (unless IgnoreRetryAfter), as a well-behaved client does:
// shedding exists to make clients back off, and one that does not is a flood that
// only a per-key rate limit stops.
func closedLoop(ctx context.Context, o LoadOptions, targeter vegeta.Targeter, rec *loadRecorder) {
	tr := &http.Transport{MaxIdleConnsPerHost: o.Clients, MaxConnsPerHost: o.Clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	// The run ends by sending nothing new; what is in flight is answered and counted.
	over, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	var wg sync.WaitGroup
	for range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for over.Err() == nil {
				var t vegeta.Target
				_ = targeter(&t)
				res, wait := send(ctx, client, &t)
				rec.add(res)
				if wait > 0 && !o.IgnoreRetryAfter {
					select {
					case <-over.Done():
					case <-time.After(wait):
					}
				}
			}
		}()
	}
	wg.Wait()
}

// send makes one request and returns its result and, for a 503, the wait its
// Retry-After asks for (1 s when it names none).
func send(ctx context.Context, client *http.Client, t *vegeta.Target) (*vegeta.Result, time.Duration) {
	res := &vegeta.Result{Method: t.Method, URL: t.URL, Timestamp: time.Now()}
	req, err := t.Request()
	if err != nil {
		res.Error = err.Error()
		return res, 0
	}
	resp, err := client.Do(req.WithContext(ctx))
	if err != nil {
		res.Latency, res.Error = time.Since(res.Timestamp), err.Error()
		return res, 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	res.Latency, res.Code = time.Since(res.Timestamp), uint16(resp.StatusCode)
	if resp.StatusCode != http.StatusServiceUnavailable {
		return res, 0
	}
	wait := time.Second
	if d, ok := backoff.RetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		wait = d
	}
	return res, wait
}

func kindOf(r *vegeta.Result) string {
	switch {
	case r.Method == http.MethodPost:
		return "create"
	case strings.HasSuffix(r.URL, "/stats"):
		return "stats"
	default:
		return "list"
	}
}

// PrintLoad writes one line per kind (accepted requests), the accepted requests
// together, the shed ones and a total line.
func PrintLoad(out io.Writer, r LoadResult, d time.Duration) {
	var total, errs uint64
	for _, k := range r.Kinds {
		total += k.Requests + k.Shed
		errs += k.Errors
		fmt.Fprintf(out, "loadtest %s: requests=%d per_s=%.0f p50_ms=%.1f p99_ms=%.1f errors=%d shed=%d codes=%v\n",
			k.Name, k.Requests, k.PerSec, ms(k.P50), ms(k.P99), k.Errors, k.Shed, k.Codes)
	}
	a, s := r.Accepted, r.Shed
	fmt.Fprintf(out, "loadtest accepted: requests=%d per_s=%.0f p50_ms=%.1f p99_ms=%.1f\n", a.Requests, a.PerSec, ms(a.P50), ms(a.P99))
	fmt.Fprintf(out, "loadtest shed: 503=%d p50_ms=%.1f p99_ms=%.1f\n", s.Requests, ms(s.P50), ms(s.P99))
	fmt.Fprintf(out, "loadtest total: requests=%d per_s=%.0f errors=%d\n", total, float64(total)/d.Seconds(), errs)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
