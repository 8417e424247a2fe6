package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
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
}

// LoadKind is what one kind of request saw.
type LoadKind struct {
	Name     string
	Requests uint64
	Errors   uint64 // transport errors and 4xx/5xx answers
	PerSec   float64
	P50, P99 time.Duration
	Codes    map[string]int
}

// The request mix, one slot per request in a round: reads are what a dashboard
// does most, writes are subscribers signing up while the campaign goes out.
var loadMix = []string{"list", "stats", "create", "list", "stats"}

// Load drives up to Clients concurrent clients (vegeta) through the mix for
// Duration, at Rate or closed loop, and returns the figures per kind.
func Load(ctx context.Context, o LoadOptions) ([]LoadKind, error) {
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
	workers := uint64(o.Clients)
	if o.Rate > 0 {
		workers = min(workers, 10) // vegeta adds workers up to MaxWorkers as the rate needs
	}
	atk := vegeta.NewAttacker(
		vegeta.Workers(workers), vegeta.MaxWorkers(uint64(o.Clients)),
		vegeta.Connections(o.Clients), vegeta.MaxConnections(o.Clients),
		vegeta.KeepAlive(true), vegeta.Timeout(30*time.Second), vegeta.MaxBody(0),
	)
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()
	metrics := map[string]*vegeta.Metrics{"list": {}, "stats": {}, "create": {}}
	for res := range atk.Attack(targeter, vegeta.Rate{Freq: o.Rate, Per: time.Second}, o.Duration, "load") {
		metrics[kindOf(res)].Add(res)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []LoadKind
	for _, name := range []string{"list", "stats", "create"} {
		m := metrics[name]
		m.Close()
		errs := uint64(0)
		for code, n := range m.StatusCodes {
			if code == "0" || code >= "400" {
				errs += uint64(n)
			}
		}
		out = append(out, LoadKind{Name: name, Requests: m.Requests, Errors: errs, PerSec: m.Rate,
			P50: m.Latencies.P50, P99: m.Latencies.P99, Codes: m.StatusCodes})
	}
	return out, nil
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

// PrintLoad writes one line per kind and a total line.
func PrintLoad(out io.Writer, kinds []LoadKind, d time.Duration) {
	var total, errs uint64
	for _, k := range kinds {
		total += k.Requests
		errs += k.Errors
		fmt.Fprintf(out, "loadtest %s: requests=%d per_s=%.0f p50_ms=%.1f p99_ms=%.1f errors=%d codes=%v\n",
			k.Name, k.Requests, k.PerSec, ms(k.P50), ms(k.P99), k.Errors, k.Codes)
	}
	fmt.Fprintf(out, "loadtest total: requests=%d per_s=%.0f errors=%d\n", total, float64(total)/d.Seconds(), errs)
}
