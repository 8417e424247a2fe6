// Package chaos is the kill -9 harness behind `sendonce-harness chaos` (`make chaos`,
// `make chaos-messages`, `make chaos-senders`, `make chaos-sequences`, `make chaos-ab`): it starts a
// throwaway PostgreSQL, fake providers and `sendonce serve` processes, SIGKILLs the
// service while it sends, and checks that every recipient got what the delivery
// promise says. The service processes run the product binary whose path Run is
// given (-sendonce), never the harness itself: the shipped sendonce carries no
// harness.
package chaos

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/pgcluster"
	"github.com/sendonce/sendonce/internal/store"
)

// chaosOptions are the flags of `sendonce-harness chaos` (`make chaos` runs it).
type chaosOptions struct {
	Provider   string // http (idempotent sink) or smtp (cannot deduplicate)
	Recipients int
	Kills      int
	Rate       float64 // sends per second; 0: sized so the kills land mid-send
	Lease      time.Duration
	BatchSize  int
	Workers    int
	DBRestarts int // PostgreSQL restarts while a serve process is sending
	// DefaultLease runs the service with the default lease and provider timeouts
	// (2m, 30s): rows the killed process held come back by liveness, not by lease
	// expiry, and the run prints the last restart → sent time.
	DefaultLease bool
	Verbose      bool
	// viaDefaultSender: chaos -messages sent through an SMTP default sender.
	viaDefaultSender bool
	// Events subscribes a receiver to every event type; at the end it must hold
	// exactly one send.* event per send row, matching its status.
	Events       bool
	EventBatch   int
	ReceiverDown time.Duration // the receiver answers 503 this long, from the first kill on
	// RetryFailed: the sink refuses every RefuseEvery-th recipient in a first
	// pass, then POST /v1/campaigns/{id}/retry-failed sends them again while the
	// executor is killed as often again (retry.go).
	RetryFailed bool
	RefuseEvery int
}

// Run proves the exactly-once promise under kill -9: a throwaway PostgreSQL, a
// sink, a campaign of N recipients, and `sendonce serve` SIGKILLed at random moments
// while it sends, restarted each time. When the campaign is sent it prints one line:
//
//	chaos: recipients=N delivered=N duplicates=0 lost=0 kills=K raw_attempts=R        (http)
//	chaos: recipients=N delivered=D duplicates=0 unknown=U kills=K raw_attempts=R     (smtp)
//	chaos: restart→sent=T (last restart after kill K; lease L)
//
// With -default-lease the service keeps its default lease (2m): the rows the
// killed process held come back through liveness (executor heartbeats), and T is
// the time from the last restart until the campaign is sent. That last process
// runs at default settings, without the rate limit that spread the send so the
// kills land mid-campaign. The shared delivery
// invariant (internal/invariant) is checked at the end of every run.
//
// It fails (exit 1) when a recipient got two copies or, with the idempotent sink,
// when one got none.
//
// bin is the sendonce binary the service processes run.
func Run(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-senders" || args[0] == "--senders") {
		return runSendersChaos(ctx, bin, args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "-sequences" || args[0] == "--sequences") {
		return runSequencesChaos(ctx, bin, args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "-bulk" || args[0] == "--bulk") {
		return runBulkChaos(ctx, bin, args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "-messages" || args[0] == "--messages") {
		return runMessagesChaos(ctx, bin, args[1:], stdout, stderr)
	}
	if len(args) > 0 && (args[0] == "-approvals" || args[0] == "--approvals") {
		return runApprovalsChaos(ctx, bin, args[1:], stdout, stderr) // approvals.go
	}
	if len(args) > 0 && (args[0] == "-pool" || args[0] == "--pool") {
		return runPoolChaos(ctx, bin, args[1:], stdout, stderr) // pool.go
	}
	if len(args) > 0 && (args[0] == "-ab" || args[0] == "--ab") {
		return runABChaos(ctx, bin, args[1:], stdout, stderr) // abtest.go
	}
	if len(args) > 0 && (args[0] == "-localtime" || args[0] == "--localtime") {
		return runLocalTimeChaos(ctx, bin, args[1:], stdout, stderr) // localtime.go
	}
	if len(args) > 0 && (args[0] == "-pacing" || args[0] == "--pacing") {
		return runPacingChaos(ctx, bin, args[1:], stdout, stderr) // pacing.go
	}
	if len(args) > 0 && (args[0] == "-skew" || args[0] == "--skew") {
		return runSkewChaos(ctx, bin, args[1:], stdout, stderr) // skew.go
	}
	o := chaosOptions{}
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	o.serviceFlags(fs)
	fs.IntVar(&o.Recipients, "recipients", 50000, "recipients in the campaign")
	fs.IntVar(&o.Kills, "kills", 5, "SIGKILLs while the campaign is sending")
	fs.Float64Var(&o.Rate, "rate", 0, "send rate limit per second (0: recipients spread over about 3s per kill; -1: unlimited, to measure throughput)")
	fs.IntVar(&o.DBRestarts, "db-restarts", 0, "restart PostgreSQL (fast shutdown) this many times mid-send, before kills")
	fs.BoolVar(&o.DefaultLease, "default-lease", false, "keep the default lease and provider timeouts (ignores -lease) and print the last restart → sent time")
	fs.BoolVar(&o.Events, "events", false, "subscribe a signature-checking receiver to every event and match its send.* events to the rows")
	fs.IntVar(&o.EventBatch, "event-batch", 50, "batch_size of the receiver's endpoint (with -events)")
	fs.DurationVar(&o.ReceiverDown, "receiver-down", 0, "the receiver answers 503 (Retry-After: 1) this long from the first kill (with -events)")
	fs.BoolVar(&o.RetryFailed, "retry-failed", false, "the sink refuses every -refuse-every'th recipient (422) until the campaign is sent, then "+
		"POST /v1/campaigns/{id}/retry-failed sends them again while the executor is killed -kills times more")
	fs.IntVar(&o.RefuseEvery, "refuse-every", 10, "with -retry-failed: refuse r<i>@example.com where i is a multiple of this")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Provider != "http" && o.Provider != "smtp" {
		return fmt.Errorf("chaos: -provider must be http or smtp")
	}
	if o.RetryFailed && (o.Provider != "http" || o.RefuseEvery < 1 || o.Recipients < o.RefuseEvery) {
		return fmt.Errorf("chaos: -retry-failed needs -provider http and 1 <= -refuse-every <= -recipients")
	}
	if o.Rate < 0 {
		o.Rate = 0 // SENDONCE_RATE_PER_SECOND=0: unlimited
	} else if o.Rate == 0 {
		o.Rate = max(50, float64(o.Recipients)/(3*float64(o.Kills+1)))
	}

	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	pool, q := db.pool, newQueries(db.pool)
	var acct, campaignID int64
	var token string
	if o.RetryFailed {
		acct, campaignID, token, err = chaosCampaignWithKey(ctx, q, db, o.Recipients)
	} else {
		acct, campaignID, err = chaosCampaign(ctx, q, o.Recipients)
	}
	if err != nil {
		return err
	}

	env := o.serveEnv(db.url)
	var receiver *eventReceiver
	if o.Events {
		if receiver, err = newEventReceiver(); err != nil {
			return err
		}
		defer receiver.close()
		account, err := chaosAccount(ctx, pool, campaignID)
		if err != nil {
			return err
		}
		if err := receiver.subscribe(ctx, pool, account, o.EventBatch); err != nil {
			return err
		}
		env = append(env, "SENDONCE_EVENT_ALLOW_PRIVATE=true", "SENDONCE_EVENT_ALLOW_HTTP=true")
	}
	snk, err := newChaosSink(o.Provider, 0, false)
	if err != nil {
		return err
	}
	defer snk.close()
	env = append(env, snk.env...)
	stats, delivered := snk.stats, snk.delivered
	if o.RetryFailed {
		snk.http.Refuse(func(body []byte) bool { return refusedRecipient(body, o.RefuseEvery) })
	}

	logTo := io.Discard
	if o.Verbose {
		logTo = stderr
	}
	start := time.Now()
	kills, restarts := 0, 0
	var restartToSent time.Duration
	for {
		runEnv := env
		if o.DefaultLease && kills == o.Kills {
			// The last restart runs at default settings, without the rate limit that
			// made the kills land mid-send: restart→sent is then what liveness costs.
			runEnv = append(append([]string(nil), env...), "SENDONCE_RATE_PER_SECOND=0")
		}
		restarted := time.Now()
		child, err := startServe(bin, runEnv, logTo)
		if err != nil {
			return err
		}
		if kills == o.Kills {
			err := waitSent(ctx, q, campaignID, 15*time.Minute)
			restartToSent = time.Since(restarted)
			if err == nil && receiver != nil {
				// The last process delivers what the killed ones left leased (their
				// leases run out) and what was held back while the receiver was down.
				var line string
				line, err = receiver.check(ctx, pool, campaignID, 5*time.Minute, true)
				fmt.Fprintln(stdout, line)
			}
			werr := terminate(ctx, q, restarted, child)
			if err != nil {
				return err
			}
			if werr != nil {
				return fmt.Errorf("chaos: the last serve did not exit cleanly on SIGTERM: %w", werr)
			}
			break
		}
		// Kill only once this process is sending, at a random moment after that.
		waitProgress(ctx, delivered)
		if o.DefaultLease && kills == o.Kills-1 {
			// The last kill lands past 40 % of the campaign, as in the measurement
			// liveness is held to, so the restart→sent figure is mostly the rescue
			// of the killed process's rows, not the sending of the rest.
			for delivered() < int64(o.Recipients)*2/5 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
		}
		if restarts < o.DBRestarts {
			// The database goes away under a sending process and comes back on the
			// same port: the executor must reconnect and carry on.
			restarts++
			if err := db.cluster.Stop(); err != nil {
				return err
			}
			sleepCtx(ctx, time.Second)
			if db.cluster, err = pgcluster.Start(ctx, pgcluster.Options{DataDir: db.dir, Port: db.cluster.Port, Fast: true}); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "chaos: database restart %d at %s, delivered %d\n", restarts, time.Since(start).Round(time.Millisecond), delivered())
			waitProgress(ctx, delivered)
		}
		if !sleepCtx(ctx, time.Duration(rand.Int64N(int64(2*time.Second)))) {
			_ = child.Process.Kill()
			_ = child.Wait()
			return ctx.Err()
		}
		_ = child.Process.Kill() // SIGKILL
		_ = child.Wait()
		if st, _ := q.ChaosCampaignStatus(ctx, campaignID); st == "sent" {
			return fmt.Errorf("chaos: the campaign finished after %d kills; lower -rate", kills)
		}
		kills++
		if kills == 1 && receiver != nil && o.ReceiverDown > 0 {
			receiver.goDown(o.ReceiverDown)
		}
		fmt.Fprintf(stderr, "chaos: kill %d at %s, delivered %d\n", kills, time.Since(start).Round(time.Millisecond), delivered())
	}

	var requeued int64
	retryKills := 0
	if o.RetryFailed {
		if requeued, retryKills, err = retryPass(ctx, bin, o, env, q, snk, acct, campaignID, token, logTo, stderr); err != nil {
			return err
		}
	}

	unique, dups, raw := stats()
	c, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acct, CampaignID: campaignID})
	if err != nil {
		return err
	}
	counts := map[string]int64{"queued": c.Queued, "sending": c.Sending, "sent": c.Sent, "failed": c.Failed,
		"suppressed": c.Suppressed, "cancelled": c.Cancelled, "unknown": c.Unknown}
	// KeptCounters: the counters the campaign's report reads equal a full recount
	// of its rows, after every kill -9 the run made.
	inv := invariant.Options{Recipients: map[int64]int64{campaignID: int64(o.Recipients)}, KeptCounters: true}
	if o.RetryFailed {
		// The sink's view too: every sent row's job id accepted exactly once.
		inv.Delivered = snk.http.AcceptCounts()
	}
	if err := invariant.Check(ctx, pool, inv); err != nil {
		return fmt.Errorf("chaos: delivery invariant violated: %w", err)
	}
	if kills > 0 {
		// The figure liveness is held to: after the last kill -9 and an immediate
		// restart, how long until the campaign is sent.
		fmt.Fprintf(stdout, "chaos: restart→sent=%s (last restart after kill %d; lease %s)\n",
			restartToSent.Round(10*time.Millisecond), kills, map[bool]string{true: "default", false: o.Lease.String()}[o.DefaultLease])
	}
	switch o.Provider {
	case "http":
		lost := int64(o.Recipients) - unique
		if o.RetryFailed {
			refused := int64(o.Recipients / o.RefuseEvery)
			fmt.Fprintf(stdout, "chaos: retry-failed refused=%d (sink refusals %d) requeued=%d retry_kills=%d failed_after=%d\n",
				refused, snk.http.Stats().Refused, requeued, retryKills, counts["failed"])
			if requeued != refused {
				return fmt.Errorf("chaos: retry-failed requeued %d rows, %d were refused", requeued, refused)
			}
		}
		fmt.Fprintf(stdout, "chaos: recipients=%d delivered=%d duplicates=%d lost=%d kills=%d raw_attempts=%d\n",
			o.Recipients, unique, dups, lost, kills, raw)
		if dups != 0 || lost != 0 || counts["sent"] != int64(o.Recipients) {
			return fmt.Errorf("chaos: exactly-once violated (rows by status: %v)", counts)
		}
	case "smtp":
		fmt.Fprintf(stdout, "chaos: recipients=%d delivered=%d duplicates=%d unknown=%d kills=%d raw_attempts=%d\n",
			o.Recipients, unique, dups, counts["unknown"], kills, raw)
		// Every recipient is accounted for: sent, or unknown (maybe delivered, never resent).
		if dups != 0 || counts["sent"]+counts["unknown"] != int64(o.Recipients) || unique < counts["sent"] {
			return fmt.Errorf("chaos: at-most-once violated (rows by status: %v, unique %d)", counts, unique)
		}
	}
	fmt.Fprintf(stderr, "chaos: %s in %s at rate %.0f/s; rows by status %v\n", o.Provider,
		time.Since(start).Round(time.Millisecond), o.Rate, counts)
	return nil
}
