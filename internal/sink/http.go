// Package sink holds fake "outside world" servers for tests, chaos runs and
// benchmarks: an HTTP send service that deduplicates on Idempotency-Key, and an
// SMTP server that cannot deduplicate. Both count what they receive so a test can
// prove every recipient got a message and none got two.
package sink

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// HTTPOptions shape the HTTP sink's behaviour.
type HTTPOptions struct {
	// Latency is added to every delivery request before it is answered.
	Latency time.Duration
	// FailRate is the fraction of requests answered 503 without accepting them.
	FailRate float64
	// DropRate is the fraction of new keys accepted and then answered by dropping the
	// connection, so the sender cannot know the outcome (the ambiguous case).
	DropRate float64
	// Seed makes the injected failures reproducible; 0 picks 1.
	Seed uint64
	// KeepDeliveries keeps each accepted request's headers and body for Deliveries
	// (tests); off, only the keys are kept, so a 50,000-message chaos run stays small.
	KeepDeliveries bool
	// Postmark makes the sink answer like Postmark's POST /email, which has no
	// idempotency key: the key is the body's Metadata.job_id, every request is
	// accepted (a second one for a key counts as a duplicate), and the answer is
	// {"MessageID", "ErrorCode": 0}.
	Postmark bool
}

// HTTPStats are the HTTP sink's counters, also served as JSON at GET /stats.
type HTTPStats struct {
	// RawAttempts counts every delivery request, replays and failures included.
	RawAttempts int64 `json:"raw_attempts"`
	// Unique counts keys accepted at least once: the messages delivered.
	Unique int64 `json:"unique"`
	// Duplicates counts keys accepted a second time. Deduplication makes this 0 by
	// construction; it is counted so a broken dedup would show.
	Duplicates int64 `json:"duplicates"`
	// Replays counts requests for a key already accepted, answered with the first result.
	Replays int64 `json:"replays"`
	// InProgress counts 409 answers: the same key was being processed.
	InProgress int64 `json:"in_progress"`
	// Failed counts injected 503 answers; Dropped counts accepted-then-dropped requests.
	Failed  int64 `json:"failed"`
	Dropped int64 `json:"dropped"`
	// Refused counts requests answered 422 by the rule set with Refuse.
	Refused int64 `json:"refused"`
}

// Delivery is one accepted request.
type Delivery struct {
	Key    string
	Header http.Header
	Body   []byte
	At     time.Time // when the sink accepted it
}

// HTTP is the HTTP sink. Deliveries are POSTs to any path; GET /stats answers
// HTTPStats. It is an http.Handler.
type HTTP struct {
	opts HTTPOptions

	mu         sync.Mutex
	rnd        *rand.Rand
	stats      HTTPStats
	accepts    map[string]int
	inProgress map[string]bool
	deliveries map[string]Delivery
	refuse     func(body []byte) bool

	srv *http.Server
	ln  net.Listener
}

// NewHTTP returns an HTTP sink handler; serve it with httptest or Listen.
func NewHTTP(opts HTTPOptions) *HTTP {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	return &HTTP{
		opts:       opts,
		rnd:        rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5eed)),
		accepts:    map[string]int{},
		inProgress: map[string]bool{},
		deliveries: map[string]Delivery{},
	}
}

// Listen serves the sink on addr (use 127.0.0.1:0) and returns its base URL.
func (s *HTTP) Listen(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed on Close
	return "http://" + ln.Addr().String(), nil
}

// Close stops a sink started with Listen.
func (s *HTTP) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Stats returns a snapshot of the counters.
func (s *HTTP) Stats() HTTPStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Deliveries returns the accepted requests by key (KeepDeliveries only).
func (s *HTTP) Deliveries() map[string]Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]Delivery, len(s.deliveries))
	for k, d := range s.deliveries {
		out[k] = d
	}
	return out
}

// Refuse makes the sink refuse, with a 422 (a permanent failure to the sender),
// every new message whose body the rule matches; nil accepts them again. A
// refused message is not accepted: the same key is accepted later once the
// rule no longer matches it.
func (s *HTTP) Refuse(rule func(body []byte) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = rule
}

// AcceptCounts returns how many times each key was accepted (1 unless a
// duplicate got through).
func (s *HTTP) AcceptCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.accepts))
	for k, n := range s.accepts {
		out[k] = n
	}
	return out
}

// ServeHTTP answers GET /stats and treats any other request as a delivery.
func (s *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/stats" {
		writeJSON(w, http.StatusOK, s.Stats())
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST a message", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 10<<20))
	if err != nil {
		return // the client went away mid-body: nothing was accepted
	}
	if s.opts.Postmark {
		s.postmark(w, r, body)
		return
	}
	// The IETF draft sends the key as a quoted sf-string; Stripe-style clients bare.
	key := strings.Trim(r.Header.Get("Idempotency-Key"), `"`)

	s.mu.Lock()
	s.stats.RawAttempts++
	if key == "" {
		s.mu.Unlock()
		http.Error(w, "Idempotency-Key required", http.StatusBadRequest)
		return
	}
	if s.accepts[key] > 0 {
		s.stats.Replays++
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]string{"id": providerID(key)})
		return
	}
	if s.inProgress[key] {
		s.stats.InProgress++
		s.mu.Unlock()
		http.Error(w, "a request with this key is in progress", http.StatusConflict)
		return
	}
	if s.refuse != nil && s.refuse(body) {
		s.stats.Refused++
		s.mu.Unlock()
		http.Error(w, "recipient refused", http.StatusUnprocessableEntity)
		return
	}
	s.inProgress[key] = true
	fail := s.opts.FailRate > 0 && s.rnd.Float64() < s.opts.FailRate
	drop := !fail && s.opts.DropRate > 0 && s.rnd.Float64() < s.opts.DropRate
	s.mu.Unlock()

	if s.opts.Latency > 0 {
		t := time.NewTimer(s.opts.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}

	s.mu.Lock()
	delete(s.inProgress, key)
	if fail {
		s.stats.Failed++
		s.mu.Unlock()
		http.Error(w, "injected failure", http.StatusServiceUnavailable)
		return
	}
	s.accept(key, r.Header.Clone(), body)
	if drop {
		s.stats.Dropped++
	}
	s.mu.Unlock()
	if drop {
		// Accepted, but the sender never hears so: the server closes the connection.
		panic(http.ErrAbortHandler)
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": providerID(key)})
}

// postmark accepts every request, keyed by Metadata.job_id, as Postmark would.
func (s *HTTP) postmark(w http.ResponseWriter, r *http.Request, body []byte) {
	var m struct {
		Metadata map[string]string `json:"Metadata"`
	}
	_ = json.Unmarshal(body, &m)
	key := m.Metadata["job_id"]
	s.mu.Lock()
	s.stats.RawAttempts++
	if key == "" {
		s.mu.Unlock()
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"ErrorCode": 300, "Message": "Metadata.job_id required"})
		return
	}
	fail := s.opts.FailRate > 0 && s.rnd.Float64() < s.opts.FailRate
	s.mu.Unlock()
	if s.opts.Latency > 0 {
		t := time.NewTimer(s.opts.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	s.mu.Lock()
	if fail {
		s.stats.Failed++
		s.mu.Unlock()
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ErrorCode": 100, "Message": "Maintenance"})
		return
	}
	s.accept(key, r.Header.Clone(), body)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"MessageID": providerID(key), "ErrorCode": 0, "Message": "OK"})
}

// accept records a delivery; s.mu is held.
func (s *HTTP) accept(key string, h http.Header, body []byte) {
	s.accepts[key]++
	switch s.accepts[key] {
	case 1:
		s.stats.Unique++
		if s.opts.KeepDeliveries {
			s.deliveries[key] = Delivery{Key: key, Header: h, Body: body, At: time.Now()}
		}
	case 2:
		s.stats.Duplicates++
	}
}

// providerID is the id the sink answers for a key, stable across replays.
func providerID(key string) string { return "sink-" + key }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b) //nolint:errcheck // the client may be gone
}

// FetchHTTPStats reads GET /stats of an HTTP sink running elsewhere (baseURL as
// returned by Listen or printed by `sendonce-harness sink`).
func FetchHTTPStats(ctx context.Context, baseURL string) (HTTPStats, error) {
	var st HTTPStats
	err := fetchJSON(ctx, strings.TrimRight(baseURL, "/")+"/stats", &st)
	return st, err
}

// Keys returns every key accepted at least once.
func (s *HTTP) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.accepts))
	for k := range s.accepts {
		out = append(out, k)
	}
	return out
}
