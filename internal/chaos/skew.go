package chaos

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/store"
)

// runSkewChaos is `sendonce chaos -skew`: one campaign sent by several replicas
// whose clocks are off from PostgreSQL's (SENDONCE_CLOCK_SKEW, one skew per
// replica: by default one 30 s behind and one 30 s ahead), each SIGKILLed at
// random moments in turn and restarted with the same skew. Leases (3 s by
// default, ten times shorter than the skew), heartbeats and retry times are the
// database's, so the skew must change nothing: with the idempotent sink every
// recipient exactly once. It prints
//
//	chaos: skew=-30s,30s recipients=N delivered=N duplicates=0 lost=0 kills=K raw_attempts=R
//
// and fails when a recipient got two copies or none.
func runSkewChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	o := chaosOptions{}
	fs := flag.NewFlagSet("chaos -skew", flag.ContinueOnError)
	o.serviceFlags(fs)
	fs.IntVar(&o.Recipients, "recipients", 5000, "recipients in the campaign")
	fs.IntVar(&o.Kills, "kills", 3, "SIGKILLs while the campaign is sending, each of one replica")
	fs.Float64Var(&o.Rate, "rate", 0, "send rate limit per second of each replica (0: sized so the kills land mid-send)")
	skewList := fs.String("skews", "-30s,30s", "one replica per clock skew (comma separated; negative: behind PostgreSQL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Provider != "http" {
		return fmt.Errorf("chaos -skew: only -provider http (an idempotent sink: exactly once is checkable)")
	}
	var skews []time.Duration
	for _, s := range strings.Split(*skewList, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("chaos -skew: -skews: %w", err)
		}
		skews = append(skews, d)
	}
	if len(skews) < 2 {
		return fmt.Errorf("chaos -skew: -skews needs two replicas or more")
	}
	if o.Rate <= 0 {
		// The replicas share the campaign: together they send it over about 3 s per kill.
		o.Rate = max(25, float64(o.Recipients)/(3*float64(o.Kills+1))/float64(len(skews)))
	}
	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	q := newQueries(db.pool)
	acct, campaignID, err := chaosCampaign(ctx, q, o.Recipients)
	if err != nil {
		return err
	}
	snk, err := newChaosSink(o.Provider, 0, false)
	if err != nil {
		return err
	}
	defer snk.close()
	env := append(o.serveEnv(db.url), snk.env...)
	logTo := io.Discard
	if o.Verbose {
		logTo = stderr
	}
	start := func(skew time.Duration) (*exec.Cmd, error) {
		return startServe(bin, append(append([]string(nil), env...), "SENDONCE_CLOCK_SKEW="+skew.String()), logTo)
	}
	begun := time.Now()
	procs := make([]*exec.Cmd, len(skews))
	started := make([]time.Time, len(skews)) // before each replica's current process
	defer func() {
		for _, p := range procs {
			if p != nil && p.ProcessState == nil {
				_ = p.Process.Kill()
				_ = p.Wait()
			}
		}
	}()
	for i, s := range skews {
		started[i] = time.Now()
		if procs[i], err = start(s); err != nil {
			return err
		}
	}
	kills := 0
	for kills < o.Kills {
		waitProgress(ctx, snk.delivered)
		if !sleepCtx(ctx, time.Duration(rand.Int64N(int64(2*time.Second)))) {
			return ctx.Err()
		}
		i := kills % len(procs)     // each replica in turn, so every skew dies mid-send
		_ = procs[i].Process.Kill() // SIGKILL
		_ = procs[i].Wait()
		if st, _ := q.ChaosCampaignStatus(ctx, campaignID); st == "sent" {
			return fmt.Errorf("chaos -skew: the campaign finished after %d kills; lower -rate", kills)
		}
		kills++
		fmt.Fprintf(stderr, "chaos: kill %d (skew %s) at %s, delivered %d\n", kills, skews[i],
			time.Since(begun).Round(time.Millisecond), snk.delivered())
		started[i] = time.Now()
		if procs[i], err = start(skews[i]); err != nil {
			return err
		}
		if kills == o.Kills {
			err := waitSent(ctx, q, campaignID, 15*time.Minute)
			werr := terminate(ctx, q, slices.MinFunc(started, time.Time.Compare), procs...)
			if err != nil {
				return err
			}
			if werr != nil {
				return fmt.Errorf("chaos -skew: the last serve processes did not exit cleanly on SIGTERM: %w", werr)
			}
		}
	}
	if o.Kills == 0 {
		if err := waitSent(ctx, q, campaignID, 15*time.Minute); err != nil {
			return err
		}
		if err := terminate(ctx, q, slices.MinFunc(started, time.Time.Compare), procs...); err != nil {
			return fmt.Errorf("chaos -skew: the serve processes did not exit cleanly on SIGTERM: %w", err)
		}
	}

	unique, dups, raw := snk.stats()
	c, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acct, CampaignID: campaignID})
	if err != nil {
		return err
	}
	if err := invariant.Check(ctx, db.pool, invariant.Options{Recipients: map[int64]int64{campaignID: int64(o.Recipients)}}); err != nil {
		return fmt.Errorf("chaos -skew: delivery invariant violated: %w", err)
	}
	names := make([]string, len(skews))
	for i, s := range skews {
		names[i] = s.String()
	}
	lost := int64(o.Recipients) - unique
	fmt.Fprintf(stdout, "chaos: skew=%s recipients=%d delivered=%d duplicates=%d lost=%d kills=%d raw_attempts=%d\n",
		strings.Join(names, ","), o.Recipients, unique, dups, lost, kills, raw)
	if dups != 0 || lost != 0 || c.Sent != int64(o.Recipients) {
		return fmt.Errorf("chaos -skew: exactly-once violated (sent %d, unknown %d, failed %d, sending %d, queued %d)",
			c.Sent, c.Unknown, c.Failed, c.Sending, c.Queued)
	}
	fmt.Fprintf(stderr, "chaos: skew run in %s at rate %s/s per replica\n", time.Since(begun).Round(time.Millisecond),
		strconv.FormatFloat(o.Rate, 'f', 0, 64))
	return nil
}
