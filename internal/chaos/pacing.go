package chaos

import (
	"context"
	cryptorand "crypto/rand"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/pacing"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
)

// The three recipient domains of `chaos -pacing`: one limited by the sender's
// domain_limits, one whose receiver defers for a while, one left alone.
const (
	pacedDomain     = "limited.test"
	deferringDomain = "deferring.test"
	freeDomain      = "free.test"
)

// runPacingChaos is `sendonce-harness chaos -pacing`: one campaign through an
// SMTP sender to three domains, the sender limiting one to -limit per second,
// the sink answering 421 4.7.0 to another for its first -defer-for. No kills:
// what it measures is pacing. From the sink's own timestamps it prints, per
// domain, the rate of its sends (first to last) against its limit, and fails
// unless the limited domain's is within 10 % of it, the free domain finished
// before the limited one could have (it was not held behind it), and every
// recipient got exactly one copy:
//
//	chaos-pacing: limited.test sent=N rate=5.02/s limit=5/s (within 10 %)
//	chaos-pacing: deferring.test sent=N deferrals=D (421 for 3s) resumed_after=3.2s
//	chaos-pacing: free.test sent=N rate=R/s done_after=T (unhindered)
//	chaos-pacing: recipients=N delivered=N duplicates=0 lost=0
func runPacingChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chaos -pacing", flag.ContinueOnError)
	perDomain := fs.Int("per-domain", 100, "recipients per domain")
	limit := fs.Float64("limit", 5, "the sender's domain limit of limited.test, per second")
	deferFor := fs.Duration("defer-for", 3*time.Second, "how long the sink answers 421 to deferring.test, from its first message")
	verbose := fs.Bool("v", false, "show the service's log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *perDomain < 10 || *limit <= 0 {
		return fmt.Errorf("chaos -pacing: -per-domain must be at least 10 and -limit above 0")
	}
	n := 3 * *perDomain
	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	pool, q := db.pool, newQueries(db.pool)

	var mu sync.Mutex
	var deferUntil time.Time
	deferrals := 0
	snk := sink.NewSMTP(sink.SMTPOptions{KeepMessages: true, Fault: func(rcpt string) sink.Fault {
		if !strings.HasSuffix(rcpt, "@"+deferringDomain) {
			return sink.Deliver
		}
		mu.Lock()
		defer mu.Unlock()
		if deferUntil.IsZero() {
			deferUntil = time.Now().Add(*deferFor)
		}
		if time.Now().Before(deferUntil) {
			deferrals++
			return sink.RcptDefer
		}
		return sink.Deliver
	}})
	addr, err := snk.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer snk.Close()
	host, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)

	acct, campaign, err := chaosCampaign(ctx, q, n)
	if err != nil {
		return err
	}
	if err := q.ChaosSubscribersSpread(ctx, harnessstore.ChaosSubscribersSpreadParams{AccountID: acct,
		Domains: []string{pacedDomain, deferringDomain, freeDomain}}); err != nil {
		return err
	}
	svc := sender.NewService(pool, nil, sender.WithGuard(egress.Guard{AllowPrivate: true}))
	sn, err := svc.Create(ctx, acct, sender.Input{Name: "relay", Type: "smtp",
		Settings:     sender.Settings{Host: host, Port: port, Security: "none"},
		DomainLimits: []pacing.DomainLimit{{Domain: pacedDomain, PerSecond: *limit}}})
	if err != nil {
		return err
	}
	if err := q.ChaosCampaignSetSender(ctx, harnessstore.ChaosCampaignSetSenderParams{SenderID: &sn.ID,
		AccountID: acct, ID: campaign}); err != nil {
		return err
	}
	env := []string{
		"SENDONCE_DATABASE_URL=" + db.url,
		"SENDONCE_PROVIDER=log",
		"SENDONCE_TICK=1s",
		"SENDONCE_WORKERS=32",
		"SENDONCE_BATCH_SIZE=50",
		"SENDONCE_DB_MAX_CONNS=8",
		"SENDONCE_LOG_LEVEL=warn",
		"SENDONCE_EVENT_ALLOW_PRIVATE=true",
		"SENDONCE_UNSUBSCRIBE_SECRET=chaos:" + cryptorand.Text(),
	}
	if *verbose {
		env[len(env)-3] = "SENDONCE_LOG_LEVEL=info"
	}
	logTo := io.Discard
	if *verbose {
		logTo = stderr
	}
	child, err := startServe(bin, env, logTo)
	if err != nil {
		return err
	}
	started := time.Now()
	werr := waitSent(ctx, q, campaign, 10*time.Minute)
	terr := terminate(ctx, q, started, child)
	if werr != nil {
		return werr
	}
	if terr != nil {
		return fmt.Errorf("chaos -pacing: serve did not exit cleanly on SIGTERM: %w", terr)
	}

	at := map[string][]time.Time{}
	for _, m := range snk.Messages() {
		for _, to := range m.To {
			_, d, _ := strings.Cut(to, "@")
			at[d] = append(at[d], m.At)
		}
	}
	for _, d := range at {
		slices.SortFunc(d, func(a, b time.Time) int { return a.Compare(b) })
	}
	rate := func(ts []time.Time) float64 {
		if len(ts) < 2 {
			return 0
		}
		return float64(len(ts)-1) / ts[len(ts)-1].Sub(ts[0]).Seconds()
	}
	var failures []string
	paced := at[pacedDomain]
	pr := rate(paced)
	within := pr >= 0.9**limit && pr <= 1.1**limit
	fmt.Fprintf(stdout, "chaos-pacing: %s sent=%d rate=%.2f/s limit=%g/s (%s)\n", pacedDomain, len(paced), pr, *limit,
		map[bool]string{true: "within 10 %", false: "NOT within 10 %"}[within])
	if !within {
		failures = append(failures, pacedDomain+" off its limit")
	}
	def := at[deferringDomain]
	mu.Lock()
	resumed := time.Duration(0)
	if len(def) > 0 && !deferUntil.IsZero() {
		resumed = def[0].Sub(deferUntil.Add(-*deferFor))
	}
	fmt.Fprintf(stdout, "chaos-pacing: %s sent=%d deferrals=%d (421 for %s) resumed_after=%s\n", deferringDomain,
		len(def), deferrals, *deferFor, resumed.Round(10*time.Millisecond))
	mu.Unlock()
	free := at[freeDomain]
	freeDone := time.Duration(0)
	if len(free) > 0 {
		freeDone = free[len(free)-1].Sub(started)
	}
	// Unhindered: the free domain was done well before the limited one could be.
	pacedSpan := time.Duration(float64(*perDomain-1) / *limit * float64(time.Second))
	unhindered := len(free) == *perDomain && freeDone < pacedSpan/2
	fmt.Fprintf(stdout, "chaos-pacing: %s sent=%d rate=%.0f/s done_after=%s (%s; the limited domain needs %s)\n",
		freeDomain, len(free), rate(free), freeDone.Round(10*time.Millisecond),
		map[bool]string{true: "unhindered", false: "HELD BACK"}[unhindered], pacedSpan.Round(10*time.Millisecond))
	if !unhindered {
		failures = append(failures, freeDomain+" held back")
	}
	st := snk.Stats()
	lost := int64(n) - st.Unique
	fmt.Fprintf(stdout, "chaos-pacing: recipients=%d delivered=%d duplicates=%d lost=%d\n", n, st.Unique, st.Duplicates, lost)
	c, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acct, CampaignID: campaign})
	if err != nil {
		return err
	}
	if err := invariant.Check(ctx, pool, invariant.Options{Recipients: map[int64]int64{campaign: int64(n)},
		KeptCounters: true}); err != nil {
		return fmt.Errorf("chaos -pacing: delivery invariant violated: %w", err)
	}
	if st.Duplicates != 0 || lost != 0 || c.Sent != int64(n) {
		failures = append(failures, fmt.Sprintf("exactly-once violated (sent %d, unknown %d, failed %d)", c.Sent, c.Unknown, c.Failed))
	}
	if len(failures) > 0 {
		return fmt.Errorf("chaos -pacing: %s", strings.Join(failures, "; "))
	}
	return nil
}
