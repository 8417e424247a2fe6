package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
)

// runSendersChaos is `sendonce-harness chaos -senders`: two accounts send at once through
// their own senders while `sendonce serve` is SIGKILLed at random moments. Account
// A's sender is Resend-shaped (the HTTP sink deduplicating on Idempotency-Key):
// every recipient exactly once. Account B's is Postmark-shaped (no key: every
// request accepted): at most once, with the recipients in flight at a kill left
// `unknown` (ambiguous_policy skip). Each sink must see only its own account's job
// ids. It prints:
//
//	chaos-senders: resend recipients=N delivered=N duplicates=0 lost=0 foreign=0 rate=R/s
//	chaos-senders: postmark recipients=N delivered=D duplicates=0 unknown=U foreign=0 rate=R/s
//	chaos-senders: kills=K in T
func runSendersChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("chaos -senders", flag.ContinueOnError)
	n := fs.Int("recipients", 5000, "recipients per account")
	kills := fs.Int("kills", 3, "SIGKILLs while the campaigns are sending")
	rateA := fs.Float64("rate-a", 0, "account A's sender rate_per_second (0: sized so the kills land mid-send)")
	rateB := fs.Float64("rate-b", 0, "account B's sender rate_per_second (0: half of A's)")
	lease := fs.Duration("lease", 3*time.Second, "SENDONCE_LEASE of the killed processes")
	latency := fs.Duration("latency", 50*time.Millisecond, "each provider's answer time, so kills find messages in flight")
	verbose := fs.Bool("v", false, "show the service's log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rateA <= 0 {
		*rateA = max(50, float64(*n)/(3*float64(*kills+1)))
	}
	if *rateB <= 0 {
		*rateB = *rateA / 2
	}
	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	pool, dbURL, q := db.pool, db.url, newQueries(db.pool)

	resend := sink.NewHTTP(sink.HTTPOptions{Latency: *latency})
	postmark := sink.NewHTTP(sink.HTTPOptions{Postmark: true, Latency: *latency})
	resendURL, err := resend.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer resend.Close()
	postmarkURL, err := postmark.Listen("127.0.0.1:0")
	if err != nil {
		return err
	}
	defer postmark.Close()

	ringEntry := sender.NewKeyRingEntry("chaos")
	ring, err := sender.ParseKeyRing([]string{ringEntry})
	if err != nil {
		return err
	}
	// The fake providers listen on loopback: private destinations allowed, here and in serve.
	svc := sender.NewService(pool, ring, sender.WithGuard(egress.Guard{AllowPrivate: true}))
	type side struct {
		acct, campaign int64
	}
	setup := func(in sender.Input) (side, error) {
		acct, campaign, err := chaosCampaign(ctx, q, *n)
		if err != nil {
			return side{}, err
		}
		sn, err := svc.Create(ctx, acct, in)
		if err != nil {
			return side{}, err
		}
		return side{acct, campaign}, q.ChaosCampaignSetSender(ctx, harnessstore.ChaosCampaignSetSenderParams{
			SenderID: &sn.ID, AccountID: acct, ID: campaign})
	}
	a, err := setup(sender.Input{Name: "resend", Type: "resend", RatePerSecond: *rateA,
		Settings: sender.Settings{Endpoint: resendURL}, Credentials: &sender.Credentials{APIKey: "re_chaos_a"}})
	if err != nil {
		return err
	}
	b, err := setup(sender.Input{Name: "postmark", Type: "postmark", RatePerSecond: *rateB, MaxConnections: 8,
		Settings: sender.Settings{Endpoint: postmarkURL}, Credentials: &sender.Credentials{ServerToken: "pm-chaos-b"}})
	if err != nil {
		return err
	}

	env := senderRunEnv(dbURL, 32, *lease, "SENDONCE_SECRETS_KEY="+ringEntry)
	logTo := io.Discard
	if *verbose {
		logTo = stderr
	}
	delivered := func() int64 { return resend.Stats().Unique + postmark.Stats().Unique }
	k, elapsed, err := killLoop{name: "chaos-senders", bin: bin, env: env, logTo: logTo, stderr: stderr, q: q,
		kills: *kills, spread: 2 * time.Second, delivered: delivered,
		done: func(ctx context.Context) error {
			return errors.Join(waitSent(ctx, q, a.campaign, 15*time.Minute), waitSent(ctx, q, b.campaign, 15*time.Minute))
		},
	}.run(ctx)
	if err != nil {
		return err
	}

	if err := invariant.Check(ctx, pool, invariant.Options{Recipients: map[int64]int64{
		a.campaign: int64(*n), b.campaign: int64(*n)}}); err != nil {
		return fmt.Errorf("chaos-senders: delivery invariant violated: %w", err)
	}
	foreign := func(s *sink.HTTP, campaign int64) int {
		bad := 0
		for _, key := range s.Keys() {
			if !strings.HasPrefix(key, "campaign:"+strconv.FormatInt(campaign, 10)+":") {
				bad++
			}
		}
		return bad
	}
	ca, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: a.acct, CampaignID: a.campaign})
	if err != nil {
		return err
	}
	cb, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: b.acct, CampaignID: b.campaign})
	if err != nil {
		return err
	}
	ra, rb := resend.Stats(), postmark.Stats()
	fa, fb := foreign(resend, a.campaign), foreign(postmark, b.campaign)
	fmt.Fprintf(stdout, "chaos-senders: resend recipients=%d delivered=%d duplicates=%d lost=%d foreign=%d sender_rate=%.0f/s\n",
		*n, ra.Unique, ra.Duplicates, int64(*n)-ra.Unique, fa, *rateA)
	fmt.Fprintf(stdout, "chaos-senders: postmark recipients=%d delivered=%d duplicates=%d unknown=%d foreign=%d sender_rate=%.0f/s\n",
		*n, rb.Unique, rb.Duplicates, cb.Unknown, fb, *rateB)
	fmt.Fprintf(stdout, "chaos-senders: kills=%d in %s\n", k, elapsed.Round(time.Millisecond))
	if ra.Duplicates != 0 || ra.Unique != int64(*n) || ca.Sent != int64(*n) || fa != 0 {
		return fmt.Errorf("chaos-senders: exactly-once violated for the resend sender (sent %d, unknown %d)", ca.Sent, ca.Unknown)
	}
	if rb.Duplicates != 0 || cb.Sent+cb.Unknown != int64(*n) || rb.Unique < cb.Sent || fb != 0 {
		return fmt.Errorf("chaos-senders: at-most-once violated for the postmark sender (sent %d, unknown %d, unique %d)",
			cb.Sent, cb.Unknown, rb.Unique)
	}
	return nil
}
