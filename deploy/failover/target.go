package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/sink"
)

// counts is what the harness reads of a sink.
type counts struct{ unique, duplicates, replays int64 }

// target is the provider side of a run.
type target interface {
	env() []string
	counts() counts
	// delivered is per job id what reached a recipient, nil when the sink cannot
	// tell job ids (SMTP).
	delivered() map[string]int
	first(t time.Time) time.Time
	stall(t time.Time) time.Duration
	close()
}

func newTarget(ctx context.Context, provider string) (target, error) {
	switch provider {
	case "http":
		s := &httpTarget{HTTP: sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true, Latency: 2 * time.Millisecond})}
		url, err := listen(s)
		if err != nil {
			return nil, err
		}
		s.url = url
		return s, nil
	case "smtp":
		s := &smtpTarget{SMTP: sink.NewSMTP(sink.SMTPOptions{Latency: 2 * time.Millisecond}), stop: make(chan struct{})}
		addr, err := s.Listen("127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		s.addr = addr
		go s.watch()
		return s, nil
	}
	return nil, fmt.Errorf("unknown -provider %q (http or smtp)", provider)
}

// timeline holds when deliveries arrived, for the stall measurement.
type timeline struct {
	mu    sync.Mutex
	times []time.Time
}

func (l *timeline) add(t time.Time) {
	l.mu.Lock()
	l.times = append(l.times, t)
	l.mu.Unlock()
}

// first is the first delivery at or after t (zero when none came).
func (l *timeline) first(t time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out time.Time
	for _, x := range l.times {
		if !x.Before(t) && (out.IsZero() || x.Before(out)) {
			out = x
		}
	}
	return out
}

// stall is the longest gap between two deliveries after t, counting from t.
func (l *timeline) stall(t time.Time) time.Duration {
	l.mu.Lock()
	ts := append([]time.Time(nil), l.times...)
	l.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	prev, longest := t, time.Duration(0)
	for _, x := range ts {
		if x.Before(t) {
			continue
		}
		longest = max(longest, x.Sub(prev))
		prev = x
	}
	return longest
}

// httpTarget is the idempotent HTTP sink, stamping every delivery attempt.
type httpTarget struct {
	*sink.HTTP
	timeline
	url string
}

func (s *httpTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		s.add(time.Now())
	}
	s.HTTP.ServeHTTP(w, r)
}

func (s *httpTarget) env() []string {
	return []string{"SENDONCE_PROVIDER=http", "SENDONCE_HTTP_PROVIDER_URL=" + s.url + "/send"}
}

func (s *httpTarget) counts() counts {
	st := s.Stats()
	return counts{unique: st.Unique, duplicates: st.Duplicates, replays: st.Replays}
}

func (s *httpTarget) delivered() map[string]int {
	out := map[string]int{}
	for k := range s.Deliveries() {
		out[k] = 1 // the sink keeps one delivery per key; replays are counted apart
	}
	return out
}

func (s *httpTarget) close() { s.Close() }

// smtpTarget is the SMTP sink, which cannot deduplicate: a second copy is a
// duplicate the recipient saw. Its arrivals are sampled every 10 ms.
type smtpTarget struct {
	*sink.SMTP
	timeline
	addr string
	stop chan struct{}
}

func (s *smtpTarget) watch() {
	var last int64
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(10 * time.Millisecond):
		}
		if n := s.Stats().Accepted; n > last {
			last = n
			s.add(time.Now())
		}
	}
}

func (s *smtpTarget) env() []string {
	host, port := splitAddr(s.addr)
	return []string{"SENDONCE_PROVIDER=smtp", "SENDONCE_SMTP_HOST=" + host, "SENDONCE_SMTP_PORT=" + port,
		"SENDONCE_SMTP_SECURITY=none"}
}

func (s *smtpTarget) counts() counts {
	st := s.Stats()
	return counts{unique: st.Unique, duplicates: st.Duplicates}
}

func (s *smtpTarget) delivered() map[string]int { return nil }

func (s *smtpTarget) close() {
	close(s.stop)
	s.Close()
}

func splitAddr(addr string) (string, string) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, ""
	}
	return host, port
}
