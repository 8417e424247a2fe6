package chaos

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/harnessstore"
)

// eventReceiver is the tenant's receiver in `sendonce-harness chaos -events`: it checks every
// signature, deduplicates deliveries on webhook-id as a receiver should, and keeps
// the send.* events it got per send id, to be matched against the final rows. Sent
// down (goDown), it answers 503 with Retry-After, then one 500 when it comes back,
// and measures how long events still waited after that: the retry schedule must
// not have been moved along by the 503s (seconds, not hours).
type eventReceiver struct {
	srv       *http.Server
	url       string
	secret    []byte
	mu        sync.Mutex
	hooks     map[string]bool    // webhook-ids seen
	events    map[string]bool    // event ids seen
	sends     map[int64][]string // send id → its send.* event types
	campaign  map[string]int     // campaign.* event types
	redeliver int                // deliveries whose webhook-id was seen before
	twice     int                // events that came in two different deliveries
	bad       int                // deliveries whose signature did not verify
	down      time.Time          // until then, answer 503 with Retry-After
	// throttled are the webhook-ids answered 503 while down; failed is set once
	// one of them, back from down, got its one 500. lastAfter and maxWait are the
	// last new event's arrival after down ended and the longest any new event
	// arriving after that waited past the end of down (or its own time, if later).
	throttled map[string]bool
	failed    bool
	lastAfter time.Duration
	maxWait   time.Duration
}

func newEventReceiver() (*eventReceiver, error) {
	r := &eventReceiver{hooks: map[string]bool{}, events: map[string]bool{}, sends: map[int64][]string{},
		campaign: map[string]int{}, throttled: map[string]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.url = "http://" + ln.Addr().String() + "/events"
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// subscribe registers the receiver as an endpoint of the account, for every type.
func (r *eventReceiver) subscribe(ctx context.Context, pool *pgxpool.Pool, account int64, batch int) error {
	svc := event.NewService(pool, event.Guard{AllowHTTP: true, AllowPrivate: true})
	_, secret, err := svc.Create(ctx, account, event.EndpointInput{URL: &r.url, BatchSize: &batch})
	if err != nil {
		return err
	}
	r.secret, err = base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	return err
}

func (r *eventReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		// The sender was killed mid-request: a cut body is no delivery (and its
		// signature cannot verify); the delivery is retried whole.
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	id, ts := req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp")
	mac := hmac.New(sha256.New, r.secret)
	fmt.Fprintf(mac, "%s.%s.%s", id, ts, body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if now.Before(r.down) {
		r.throttled[id] = true
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if !r.failed && r.throttled[id] {
		// Back, but the first delivery that was throttled gets one plain failure:
		// its retry must wait the schedule's first step, however many 503s it got.
		r.failed = true
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	ok := false
	for _, sig := range strings.Fields(req.Header.Get("webhook-signature")) {
		ok = ok || hmac.Equal([]byte(sig), []byte(want))
	}
	if !ok {
		r.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.hooks[id] {
		r.redeliver++
		w.WriteHeader(http.StatusNoContent)
		return
	}
	var evs []event.Event
	var env struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &env) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if env.Type == event.BatchType {
		_ = json.Unmarshal(env.Data, &evs)
	} else {
		var e event.Event
		_ = json.Unmarshal(body, &e)
		evs = append(evs, e)
	}
	r.hooks[id] = true
	for _, e := range evs {
		if r.events[e.ID] {
			r.twice++
			continue
		}
		r.events[e.ID] = true
		if !r.down.IsZero() && now.After(r.down) {
			r.lastAfter = now.Sub(r.down)
			r.maxWait = max(r.maxWait, now.Sub(later(r.down, e.Timestamp)))
		}
		if strings.HasPrefix(e.Type, "campaign.") {
			r.campaign[e.Type]++
			continue
		}
		var d struct {
			SendID int64 `json:"send_id"`
		}
		if strings.HasPrefix(e.Type, "send.") && json.Unmarshal(e.Data, &d) == nil {
			r.sends[d.SendID] = append(r.sends[d.SendID], e.Type)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// goDown makes the receiver answer 503 for d.
func (r *eventReceiver) goDown(d time.Duration) {
	r.mu.Lock()
	r.down = time.Now().Add(d)
	r.mu.Unlock()
}

// check waits (up to limit) until the receiver holds a send.* event for every send
// row of the campaign (and, with lifecycle, its campaign.sent), then compares the
// two one to one. A message stream (lifecycle false) has no campaign.* events.
func (r *eventReceiver) check(ctx context.Context, pool *pgxpool.Pool, campaign int64, limit time.Duration, lifecycle bool) (string, error) {
	rows := map[int64]string{}
	sends, err := harnessstore.New(pool).ChaosSendStatuses(ctx, campaign)
	if err != nil {
		return "", err
	}
	for _, r := range sends {
		rows[r.ID] = r.Status
	}
	deadline := time.Now().Add(limit)
	for {
		r.mu.Lock()
		n, sent := len(r.sends), r.campaign[event.CampaignSent]
		r.mu.Unlock()
		if (n >= len(rows) && (sent > 0 || !lifecycle)) || time.Now().After(deadline) {
			break
		}
		if !sleepCtx(ctx, 200*time.Millisecond) {
			return "", ctx.Err()
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	missing, wrong := 0, 0
	for id, status := range rows {
		got := r.sends[id]
		switch {
		case len(got) == 0:
			missing++
		case len(got) != 1 || got[0] != "send."+status:
			wrong++
		}
	}
	extra := len(r.sends) - (len(rows) - missing)
	line := fmt.Sprintf("chaos: events rows=%d send_events=%d missing=%d wrong=%d extra=%d twice=%d redelivered=%d bad_signatures=%d campaign=%v",
		len(rows), len(r.sends), missing, wrong, extra, r.twice, r.redeliver, r.bad, r.campaign)
	if missing != 0 || wrong != 0 || extra != 0 || r.twice != 0 || r.bad != 0 || (lifecycle &&
		(r.campaign[event.CampaignStarted] != 1 || r.campaign[event.CampaignSent] != 1)) {
		return line, fmt.Errorf("chaos: the events do not match the send rows one to one")
	}
	if !r.down.IsZero() {
		if !r.failed {
			return line, fmt.Errorf("chaos: no delivery throttled while the receiver was down came back to get its 500")
		}
		line += fmt.Sprintf("\nchaos: events after the receiver recovered (503 + Retry-After, then one 500): last event %s later, longest wait %s",
			r.lastAfter.Round(10*time.Millisecond), r.maxWait.Round(10*time.Millisecond))
		// The 500 waits the schedule's first step (5 s); the next step is 5 minutes.
		if r.maxWait > 2*time.Minute {
			return line, fmt.Errorf("chaos: an event waited %s after the receiver recovered: the retry schedule ran ahead", r.maxWait)
		}
	}
	return line, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func (r *eventReceiver) close() { _ = r.srv.Close() }

func chaosAccount(ctx context.Context, pool *pgxpool.Pool, campaign int64) (int64, error) {
	return harnessstore.New(pool).ChaosCampaignAccount(ctx, campaign)
}
