package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/transactional"
)

// runPoolChaos is `sendonce-harness chaos -pool`: a campaign (ambiguous_policy
// skip) on a sender pool of two SMTP sinks, primary and secondary. Mid-campaign
// the primary dies: for a moment it stores each message and drops the connection
// instead of answering the final dot (a relay that queued mail and crashed: the
// sender cannot know), then it closes for good (connection refused). Meanwhile
// `sendonce serve` is SIGKILLed. The rows the primary refused move to the
// secondary; the rows in doubt (the lost answers, the sends in flight at a kill)
// never change route and end unknown. It prints:
//
//	chaos-pool: recipients=N delivered=D duplicates=0 lost=0 unknown=U
//	chaos-pool: route primary sent=… unknown=…; route secondary sent=… unknown=…
//	chaos-pool: kills=K primary died after P deliveries, in T
//
// duplicates counts Message-IDs accepted more than once, by one sink or by both;
// lost counts rows neither sent nor unknown, and rows marked sent that no sink holds.
// With -messages the recipients are transactional messages naming the pool (its
// message stream) instead of a campaign's, accepted before the first serve.
func runPoolChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chaos -pool", flag.ContinueOnError)
	n := fs.Int("recipients", 2000, "recipients of the campaign")
	kills := fs.Int("kills", 2, "SIGKILLs while the campaign is sending (at least one)")
	rate := fs.Float64("rate", 0, "the senders' rate_per_second (0: sized so the kills land mid-send)")
	latency := fs.Duration("latency", 30*time.Millisecond, "each sink's answer time, so kills and the death find messages in flight")
	dieAt := fs.Float64("die-at", 0.25, "the primary dies once this fraction of the recipients was delivered")
	dying := fs.Duration("dying", 300*time.Millisecond, "how long the dying primary drops its answers before it closes")
	lease := fs.Duration("lease", 3*time.Second, "SENDONCE_LEASE of the killed processes")
	verbose := fs.Bool("v", false, "show the service's log")
	messages := fs.Bool("messages", false, "send transactional messages naming the pool instead of a campaign")
	if err := fs.Parse(args); err != nil {
		return err
	}
	*kills = max(*kills, 1)
	if *rate <= 0 {
		*rate = max(50, float64(*n)/(3*float64(*kills+1)))
	}
	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	pool, q := db.pool, newQueries(db.pool)

	var down atomic.Bool // the primary is dying: it stores and drops every answer
	var dead atomic.Bool // the primary is closed: connections refused
	primary := sink.NewSMTP(sink.SMTPOptions{Latency: *latency, KeepMessages: true, Fault: func(string) sink.Fault {
		if down.Load() {
			return sink.DropAfterData
		}
		return sink.Deliver
	}})
	secondary := sink.NewSMTP(sink.SMTPOptions{Latency: *latency, KeepMessages: true})
	primaryAddr, err := primary.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer primary.Close()
	secondaryAddr, err := secondary.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer secondary.Close()

	var acct, campaign int64
	if *messages {
		acct, err = q.ChaosAccountCreate(ctx, "chaos")
	} else {
		acct, campaign, err = chaosCampaign(ctx, q, *n)
	}
	if err != nil {
		return err
	}
	// The sinks listen on loopback: private destinations allowed, here and in serve.
	svc := sender.NewService(pool, nil, sender.WithGuard(egress.Guard{AllowPrivate: true}))
	relay := func(name, addr string) (int64, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return 0, err
		}
		p, _ := strconv.Atoi(port)
		sn, err := svc.Create(ctx, acct, sender.Input{Name: name, Type: "smtp", RatePerSecond: *rate,
			Settings: sender.Settings{Host: host, Port: p, Security: "none"}})
		return sn.ID, err
	}
	one, err := relay("primary", primaryAddr)
	if err != nil {
		return err
	}
	two, err := relay("secondary", secondaryAddr)
	if err != nil {
		return err
	}
	pl, err := svc.CreatePool(ctx, acct, sender.PoolInput{Name: "relays", Senders: []int64{one, two}})
	if err != nil {
		return err
	}
	if *messages {
		if campaign, err = poolMessages(ctx, pool, acct, pl.ID, *n); err != nil {
			return err
		}
	} else if err := q.ChaosCampaignSetPool(ctx, harnessstore.ChaosCampaignSetPoolParams{PoolID: &pl.ID, AccountID: acct,
		ID: campaign}); err != nil {
		return err
	}
	what := "the campaign"
	if *messages {
		what = "the messages"
	}

	env := senderRunEnv(db.url, 16, *lease,
		"SENDONCE_POOL_FAILBACK=1h") // the dead primary is not tried again during the run
	logTo := io.Discard
	if *verbose {
		logTo = stderr
	}
	delivered := func() int64 { return primary.Stats().Unique + secondary.Stats().Unique }

	// The primary's death, once enough was delivered, at a moment of its own.
	diedAfter := make(chan int64, 1)
	dctx, stopDeath := context.WithCancel(ctx)
	defer stopDeath()
	go func() {
		for delivered() < int64(*dieAt*float64(*n)) {
			if !sleepCtx(dctx, 10*time.Millisecond) {
				return
			}
		}
		down.Store(true)
		at := delivered()
		fmt.Fprintf(stderr, "chaos-pool: the primary is dying after %d deliveries\n", at)
		sleepCtx(dctx, *dying)
		_ = primary.Close()
		dead.Store(true)
		diedAfter <- at
	}()

	k, elapsed, err := killLoop{name: "chaos-pool", bin: bin, env: env, logTo: logTo, stderr: stderr, q: q,
		kills: *kills, spread: 1500 * time.Millisecond, delivered: delivered,
		beforeKill: func(k int) {
			for k == *kills-1 && !dead.Load() && ctx.Err() == nil {
				// The last kill lands after the primary died: a process that starts
				// with the primary gone learns it from its own sends.
				sleepCtx(ctx, 20*time.Millisecond)
			}
		},
		done: func(ctx context.Context) error {
			if *messages {
				return waitSettled(ctx, pool, acct, campaign, 15*time.Minute)
			}
			return waitSent(ctx, q, campaign, 15*time.Minute)
		},
	}.run(ctx)
	if err != nil {
		return err
	}
	died := int64(-1)
	select {
	case died = <-diedAfter:
	default:
	}

	if err := invariant.Check(ctx, pool, invariant.Options{Recipients: map[int64]int64{campaign: int64(*n)}}); err != nil {
		return fmt.Errorf("chaos-pool: delivery invariant violated: %w", err)
	}
	counts, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acct, CampaignID: campaign})
	if err != nil {
		return err
	}
	copies := map[string]int{}
	for _, s := range []*sink.SMTP{primary, secondary} {
		for _, m := range s.Messages() {
			copies[m.MessageID]++
		}
	}
	duplicates := 0
	for _, c := range copies {
		duplicates += c - 1
	}
	lost := int64(*n) - counts.Sent - counts.Unknown
	if int64(len(copies)) < counts.Sent {
		lost += counts.Sent - int64(len(copies)) // rows marked sent that no sink holds
	}
	routes, err := q.ChaosRoutes(ctx, campaign)
	if err != nil {
		return err
	}
	per := map[int64]map[string]int64{one: {}, two: {}}
	for _, r := range routes {
		if per[r.SenderID] == nil {
			per[r.SenderID] = map[string]int64{}
		}
		per[r.SenderID][r.Status] = r.N
	}
	fmt.Fprintf(stdout, "chaos-pool: recipients=%d delivered=%d duplicates=%d lost=%d unknown=%d failed=%d suppressed=%d\n",
		*n, len(copies), duplicates, lost, counts.Unknown, counts.Failed, counts.Suppressed)
	fmt.Fprintf(stdout, "chaos-pool: route primary sent=%d unknown=%d; route secondary sent=%d unknown=%d; other routes=%d\n",
		per[one]["sent"], per[one]["unknown"], per[two]["sent"], per[two]["unknown"], len(per)-2)
	if counts.Failed > 0 {
		failed, err := q.ChaosFailedErrors(ctx, campaign)
		if err != nil {
			return err
		}
		for _, f := range failed {
			fmt.Fprintf(stdout, "chaos-pool: failed=%d last_error=%q\n", f.N, f.LastError)
		}
	}
	fmt.Fprintf(stdout, "chaos-pool: kills=%d primary died after %d deliveries, in %s\n", k, died, elapsed.Round(time.Millisecond))
	switch {
	case duplicates != 0 || lost != 0:
		return fmt.Errorf("chaos-pool: exactly-once violated (duplicates %d, lost %d)", duplicates, lost)
	case died < 0:
		return fmt.Errorf("chaos-pool: %s ended before the primary died (raise -recipients or lower -die-at)", what)
	case per[two]["sent"] == 0:
		return fmt.Errorf("chaos-pool: nothing failed over to the secondary")
	case len(per) != 2:
		return fmt.Errorf("chaos-pool: rows went through a route outside the pool: %v", per)
	}
	return nil
}

// poolMessages accepts n transactional messages of acct naming sender pool pl, as
// POST /v1/messages does, and returns the pool's message stream (the campaign
// row its sends belong to).
func poolMessages(ctx context.Context, pool *pgxpool.Pool, acct, pl int64, n int) (int64, error) {
	svc := transactional.NewService(pool, nil)
	subject, text := "Receipt {{.Attributes.n}}", "Thanks"
	for i := range n {
		if _, _, err := svc.SendForRecipient(ctx, acct, "chaos-"+strconv.Itoa(i), transactional.Request{
			To: "r" + strconv.Itoa(i) + "@example.com", From: "chaos@example.com", Subject: &subject, Text: &text,
			Data: []byte(`{"n":` + strconv.Itoa(i) + `}`), PoolID: &pl}); err != nil {
			return 0, err
		}
	}
	return store.New(pool).MessageStreamEnsure(ctx, store.MessageStreamEnsureParams{AccountID: acct, PoolID: &pl})
}

// waitSettled waits until none of stream's sends is queued or in flight (a
// message stream never finishes as a campaign does).
func waitSettled(ctx context.Context, pool *pgxpool.Pool, acct, stream int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		c, err := store.New(pool).CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acct, CampaignID: stream})
		if err == nil && c.Queued+c.Sending == 0 {
			return nil
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return ctx.Err()
		}
	}
	return errors.New("chaos: the messages were not settled in time")
}
