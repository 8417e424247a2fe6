package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/transactional"
)

// runMessagesChaos is `sendonce-harness chaos -messages`: the kill -9 test of transactional
// messages. One API process (`serve --executor=false`) accepts N messages, each
// under its own Idempotency-Key (every fourth block of 50 through
// POST /v1/messages/batch), from concurrent clients that retry a failed request
// with the same key; executor processes (`serve --api=false`) are SIGKILLed at
// random moments while they send, together with the API process, and restarted.
// When every message is settled, some keys are posted again (they must answer the
// same message, Idempotent-Replayed), and every message is matched with the sink
// through GET /v1/messages:
//
//	chaos-messages: messages=N delivered=N duplicates=0 lost=0 kills=K replays=R raw_attempts=A     (http)
//	chaos-messages: messages=N delivered=D duplicates=0 unknown=U kills=K replays=R raw_attempts=A  (smtp)
//
// With the idempotent HTTP sink each message must be delivered exactly once and
// be `sent`; with SMTP at most once, a `sent` message delivered, and every message
// the sink never saw `unknown` (the stream's ambiguous_policy skip). The shared
// delivery invariant (internal/invariant) is checked at the end.
//
// With -default-sender (SMTP only) the messages leave through an SMTP sender set as
// the account's default, while the environment's provider is `log`, which is
// idempotent: the default stream names no sender, so a rescuer that judged a row by
// today's configuration instead of what its claim recorded would replay it and the
// SMTP sink would count second copies. The same at-most-once checks apply, and a
// message `sent` through the wrong provider is one the sink never saw.
func runMessagesChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	o := chaosOptions{}
	fs := flag.NewFlagSet("chaos -messages", flag.ContinueOnError)
	o.serviceFlags(fs)
	fs.IntVar(&o.Recipients, "messages", 5000, "messages to post")
	fs.IntVar(&o.Kills, "kills", 3, "SIGKILLs of every service process while messages are in flight")
	fs.Float64Var(&o.Rate, "rate", 0, "send rate limit per second of each executor (0: sized so the kills land mid-send)")
	executors := fs.Int("executors", 2, "executor processes running at once (all are killed at each kill)")
	clients := fs.Int("clients", 8, "concurrent API clients posting the messages")
	latency := fs.Duration("latency", 200*time.Millisecond, "the sink's answer time, so kills find messages in flight")
	replays := fs.Int("replays", 200, "keys posted again after the kills (one batch of 50 among them)")
	viaDefault := fs.Bool("default-sender", false, "send through an SMTP sender set as the account's default "+
		"(the environment's provider being the idempotent log); needs -provider smtp")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *viaDefault && o.Provider != "smtp" {
		return errors.New("chaos -messages: -default-sender needs -provider smtp")
	}
	if o.Recipients < 1 || *executors < 1 || *clients < 1 {
		return errors.New("chaos -messages: -messages, -executors and -clients must be at least 1")
	}
	if o.Rate < 0 {
		o.Rate = 0
	} else if o.Rate == 0 {
		// Split between the executors, so the kills land while messages are in flight.
		o.Rate = max(25, float64(o.Recipients)/(3*float64(o.Kills+1)*float64(*executors)))
	}
	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	q := newQueries(db.pool)
	acct, token, err := account.NewService(db.pool).Create(ctx, "chaos-messages")
	if err != nil {
		return err
	}
	snk, err := newChaosSink(o.Provider, *latency, true)
	if err != nil {
		return err
	}
	defer snk.close()
	env := append(o.serveEnv(db.url), snk.env...)
	// Every message's outcome also goes to an event endpoint of the account, in
	// deliveries of 10: each send.* once, whatever the kills (the fan-out must
	// find outcomes no other event follows).
	receiver, err := newEventReceiver()
	if err != nil {
		return err
	}
	defer receiver.close()
	if err := receiver.subscribe(ctx, db.pool, acct.ID, 10); err != nil {
		return err
	}
	env = append(env, "SENDONCE_EVENT_ALLOW_PRIVATE=true", "SENDONCE_EVENT_ALLOW_HTTP=true")
	if *viaDefault {
		if env, err = defaultSMTPSender(ctx, db, acct.ID, snk, env); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	apiEnv := append(append([]string(nil), env...), "SENDONCE_ADDR="+addr, "SENDONCE_API_RATE_PER_SECOND=0")
	logTo := io.Discard
	if o.Verbose {
		logTo = stderr
	}

	c := &messagesClient{base: "http://" + addr, token: token, http: &http.Client{Timeout: 10 * time.Second}}
	startAPI := func() (*exec.Cmd, error) {
		api, err := startProcess(bin, apiEnv, logTo, "serve", "--executor=false")
		if err != nil {
			return nil, err
		}
		return api, c.waitReady(ctx, time.Minute)
	}
	api, err := startAPI()
	if err != nil {
		return err
	}
	defer func() { _ = api.Process.Kill(); _ = api.Wait() }()

	// The clients post every message once, retrying each request until it is answered.
	ids := make([]int64, o.Recipients)
	var posted atomic.Int64
	postCtx, stopPosting := context.WithCancel(ctx)
	defer stopPosting()
	postErr := make(chan error, 1)
	go func() { postErr <- c.postAll(postCtx, o.Recipients, *clients, ids, &posted) }()

	start := time.Now()
	kills := 0
	for {
		var procs []*exec.Cmd
		started := time.Now()
		for range *executors {
			p, err := startServe(bin, env, logTo)
			if err != nil {
				return err
			}
			procs = append(procs, p)
		}
		if kills == o.Kills {
			err := <-postErr
			if err == nil {
				err = waitMessagesSettled(ctx, q, acct.ID, int64(o.Recipients), 15*time.Minute)
			}
			if err == nil {
				var stream int64
				if stream, err = q.ChaosMessageStream(ctx, acct.ID); err == nil {
					var line string
					line, err = receiver.check(ctx, db.pool, stream, 5*time.Minute, false)
					fmt.Fprintln(stdout, strings.Replace(line, "chaos: events", "chaos-messages: events", 1))
				}
			}
			werr := terminate(ctx, q, started, procs...)
			if err != nil {
				return err
			}
			if werr != nil {
				return fmt.Errorf("chaos-messages: the last executors did not exit cleanly on SIGTERM: %w", werr)
			}
			break
		}
		waitProgress(ctx, snk.delivered)
		if !sleepCtx(ctx, time.Duration(rand.Int64N(int64(2*time.Second)))) {
			return ctx.Err()
		}
		// The whole deployment dies at once: executors mid-send, the API mid-request.
		_ = api.Process.Kill()
		for _, p := range procs {
			_ = p.Process.Kill()
		}
		_ = api.Wait()
		for _, p := range procs {
			_ = p.Wait()
		}
		kills++
		fmt.Fprintf(stderr, "chaos-messages: kill %d at %s, posted %d, delivered %d\n",
			kills, time.Since(start).Round(time.Millisecond), posted.Load(), snk.delivered())
		if api, err = startAPI(); err != nil {
			return err
		}
	}
	elapsed := time.Since(start)

	// The same key, after all that, names the same message.
	replayed, err := c.replay(ctx, ids, *replays)
	if err != nil {
		return err
	}
	msgs, err := c.listAll(ctx)
	if err != nil {
		return err
	}
	o.viaDefaultSender = *viaDefault
	return checkMessagesChaos(ctx, o, q, db, snk, acct.ID, ids, msgs, kills, replayed, elapsed, stdout, stderr)
}

// checkMessagesChaos matches every message the API reports with what the sink
// received and prints the summary line.
func checkMessagesChaos(ctx context.Context, o chaosOptions, q *queries, db *chaosDB, snk *chaosSink,
	acct int64, ids []int64, msgs map[string]chaosMessage, kills, replayed int, elapsed time.Duration,
	stdout, stderr io.Writer) error {
	n := len(ids)
	// Deliveries per message, keyed by its index (the job id of the HTTP sink, the
	// one recipient of the SMTP sink).
	got := make([]int, n)
	unexpected := 0
	index := func(s, prefix, suffix string) int {
		i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(s, prefix), suffix))
		if err != nil || !strings.HasPrefix(s, prefix) || !strings.HasSuffix(s, suffix) || i < 0 || i >= n {
			return -1
		}
		return i
	}
	if snk.http != nil {
		for _, k := range snk.http.Keys() {
			if i := index(k, transactional.JobID(acct, "chaos-msg-"), ""); i >= 0 {
				got[i]++
			} else {
				unexpected++
			}
		}
	} else {
		for _, m := range snk.smtp.Messages() {
			for _, to := range m.To {
				if i := index(to, "m", "@example.com"); i >= 0 {
					got[i]++
				} else {
					unexpected++
				}
			}
		}
	}
	delivered := map[string]int{}
	byStatus := map[string]int{}
	var bad []string
	for i := range n {
		key := messageKey(i)
		m, ok := msgs[key]
		delivered[transactional.JobID(acct, key)] = got[i]
		if !ok || m.ID != ids[i] {
			bad = append(bad, fmt.Sprintf("%s: listed %v with id %d, posted as %d", key, ok, m.ID, ids[i]))
			continue
		}
		byStatus[m.Status]++
		switch {
		case got[i] > 1:
			bad = append(bad, fmt.Sprintf("%s delivered %d times (%s)", key, got[i], m.Status))
		case m.Status == "sent" && got[i] != 1:
			bad = append(bad, fmt.Sprintf("%s is sent but was not delivered", key))
		case o.Provider == "http" && (m.Status != "sent" || got[i] != 1):
			bad = append(bad, fmt.Sprintf("%s is %s, delivered %d times", key, m.Status, got[i]))
		case m.Status != "sent" && m.Status != "unknown":
			bad = append(bad, fmt.Sprintf("%s is %s, delivered %d times", key, m.Status, got[i]))
		}
	}
	if len(msgs) != n {
		bad = append(bad, fmt.Sprintf("the API lists %d messages for %d posted", len(msgs), n))
	}
	if unexpected > 0 {
		bad = append(bad, fmt.Sprintf("%d deliveries of no posted message", unexpected))
	}
	stream, err := q.ChaosMessageStream(ctx, acct)
	if err != nil {
		return err
	}
	if err := invariant.Check(ctx, db.pool, invariant.Options{Delivered: delivered,
		Recipients: map[int64]int64{stream: int64(n)}}); err != nil {
		bad = append(bad, "delivery invariant: "+err.Error())
	}

	unique, dups, raw := snk.stats()
	switch o.Provider {
	case "http":
		fmt.Fprintf(stdout, "chaos-messages: messages=%d delivered=%d duplicates=%d lost=%d kills=%d replays=%d raw_attempts=%d\n",
			n, unique, dups, int64(n)-unique, kills, replayed, raw)
	case "smtp":
		via := ""
		if o.viaDefaultSender {
			via = " via=default-sender"
		}
		fmt.Fprintf(stdout, "chaos-messages: messages=%d delivered=%d duplicates=%d unknown=%d kills=%d replays=%d raw_attempts=%d%s\n",
			n, unique, dups, byStatus["unknown"], kills, replayed, raw, via)
	}
	fmt.Fprintf(stderr, "chaos-messages: %s in %s at rate %.0f/s per executor; messages by status %v\n",
		o.Provider, elapsed.Round(time.Millisecond), o.Rate, byStatus)
	if dups != 0 {
		bad = append(bad, fmt.Sprintf("the sink counted %d second copies", dups))
	}
	if len(bad) > 0 {
		if len(bad) > 20 {
			bad = append(bad[:20], fmt.Sprintf("… and %d more", len(bad)-20))
		}
		return fmt.Errorf("chaos-messages: delivery promise violated:\n  %s", strings.Join(bad, "\n  "))
	}
	return nil
}

// waitMessagesSettled waits until the account's stream holds n rows, none queued
// or sending.
func waitMessagesSettled(ctx context.Context, q *queries, acct, n int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if stream, err := q.ChaosMessageStream(ctx, acct); err == nil {
			c, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acct, CampaignID: stream})
			total := c.Queued + c.Sending + c.Sent + c.Failed + c.Suppressed + c.Cancelled + c.Unknown
			if err == nil && total == n && c.Queued+c.Sending == 0 {
				return nil
			}
		}
		if !sleepCtx(ctx, 50*time.Millisecond) {
			return ctx.Err()
		}
	}
	return errors.New("chaos-messages: the messages were not settled in time")
}

// defaultSMTPSender makes an SMTP sender aimed at the run's SMTP sink the
// account's default and returns env with the environment's provider set to log.
func defaultSMTPSender(ctx context.Context, db *chaosDB, acct int64, snk *chaosSink, env []string) ([]string, error) {
	host, port := "", 0
	for _, kv := range snk.env {
		if v, ok := strings.CutPrefix(kv, "SENDONCE_SMTP_HOST="); ok {
			host = v
		}
		if v, ok := strings.CutPrefix(kv, "SENDONCE_SMTP_PORT="); ok {
			port, _ = strconv.Atoi(v)
		}
	}
	// The sink is on loopback, which the outgoing-connection guard refuses unless
	// private destinations are allowed (for the service processes too).
	svc := sender.NewService(db.pool, nil, sender.WithGuard(egress.Guard{AllowPrivate: true}))
	if _, err := svc.Create(ctx, acct, sender.Input{Name: "relay", Type: "smtp",
		Settings: sender.Settings{Host: host, Port: port, Security: "none"}, AllowedFrom: []string{}, Default: true}); err != nil {
		return nil, fmt.Errorf("chaos-messages: the default sender: %w", err)
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SENDONCE_PROVIDER=") {
			out = append(out, kv)
		}
	}
	return append(out, "SENDONCE_PROVIDER=log", "SENDONCE_EVENT_ALLOW_PRIVATE=true"), nil
}

func messageKey(i int) string { return "chaos-msg-" + strconv.Itoa(i) }

// messageBody is message i as posted: its own recipient, so the SMTP sink can
// count the copies of each.
func messageBody(i int) map[string]any {
	return map[string]any{
		"to":      "m" + strconv.Itoa(i) + "@example.com",
		"from":    "shop@example.com",
		"subject": "Receipt " + strconv.Itoa(i),
		"text":    "Order " + strconv.Itoa(i) + " is confirmed, {{.Name}}.",
		"to_name": "Customer " + strconv.Itoa(i),
		"tags":    []string{"chaos"},
	}
}
