package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/suppression"
)

// bulkOptions are the flags of `sendonce chaos -bulk`.
type bulkOptions struct {
	chaosOptions
	Imports  int
	Cut      bool
	MaxDelay time.Duration
}

// runBulkChaos is `sendonce chaos -bulk`: one tenant's bulk writes during a send,
// and how long another tenant's events wait meanwhile. Account A's campaign sends
// through `sendonce serve` processes that are SIGKILLed -kills times; then, while it
// still sends, A cancels it and imports -imports subscribers (in imports of the
// largest size, at once), and account B adds suppressions one after another, each
// timed from its commit until its event is readable (the query behind B's pull and
// stream; the stream's own poll interval is not counted). Event readers stop below
// the oldest running transaction, so a cancel or import that held one transaction
// for its whole size held B's events back as long. With -cut the cancel stops
// right after the campaign's change commits, as if its process died between
// batches: the executors' sweep must close the queued rows. It prints
//
//	chaos-bulk: recipients=N imported=M cancelled=C sent=S duplicates=0 kills=K cancel=… import=…
//	chaos-bulk: other tenant's event delay max=… p50=… events=E (target ≤ 1s)
//
// and fails on a second copy, a violated delivery invariant, queued rows left in
// the cancelled campaign, or (with -max-delay) a delay over the bound.
func runBulkChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	o := bulkOptions{}
	fs := flag.NewFlagSet("chaos -bulk", flag.ContinueOnError)
	o.serviceFlags(fs)
	fs.IntVar(&o.Recipients, "recipients", 100000, "recipients of account A's campaign, cancelled mid-send")
	fs.IntVar(&o.Imports, "imports", 200000, "subscribers account A imports meanwhile (in imports of at most 100,000 rows)")
	fs.IntVar(&o.Kills, "kills", 1, "SIGKILLs of the sending process before the cancel")
	fs.BoolVar(&o.Cut, "cut", false, "cut the cancel short once the campaign is cancelled, as if its process died between batches: the executors' sweep closes the rest")
	fs.DurationVar(&o.MaxDelay, "max-delay", 0, "fail when another tenant's event waits longer than this (0: print only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Provider != "http" {
		return fmt.Errorf("chaos -bulk: -provider must be http")
	}
	// Slow enough that the send is still under way after the kills.
	o.Rate = max(50, float64(o.Recipients)/60)
	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	pool, q := db.pool, newQueries(db.pool)
	acctA, campaignID, err := chaosCampaign(ctx, q, o.Recipients)
	if err != nil {
		return err
	}
	acctB, err := q.ChaosAccountCreate(ctx, "other")
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

	child, err := startServe(bin, env, logTo)
	if err != nil {
		return err
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	for kills := 0; kills < o.Kills; kills++ {
		waitProgress(ctx, snk.delivered)
		if !sleepCtx(ctx, 500*time.Millisecond) {
			return ctx.Err()
		}
		_ = child.Process.Kill() // SIGKILL
		_ = child.Wait()
		fmt.Fprintf(stderr, "chaos-bulk: kill %d, delivered %d\n", kills+1, snk.delivered())
		if child, err = startServe(bin, env, logTo); err != nil {
			return err
		}
	}
	waitProgress(ctx, snk.delivered)

	// A's bulk writes, all at once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	done := make(chan struct{})
	var cancelTook, importTook time.Duration
	wg.Add(1)
	go func() {
		defer wg.Done()
		cctx, stop := context.WithCancel(ctx)
		defer stop()
		if o.Cut {
			go func() {
				for cctx.Err() == nil {
					if st, _ := q.ChaosCampaignStatus(cctx, campaignID); st == "cancelled" {
						stop()
					}
					sleepCtx(cctx, 2*time.Millisecond)
				}
			}()
		}
		start := time.Now()
		// Cut short, the cancel's context ends the moment the campaign reads as
		// cancelled, which can be while its committing transaction still waits for
		// the server's answer: a context error then is the cut, not a failure (the
		// cancel committed; the checks below hold the rest to the sweep).
		if _, err := campaign.NewService(pool).Cancel(cctx, acctA, campaignID); err != nil &&
			!(o.Cut && errors.Is(err, context.Canceled) && cctx.Err() != nil) {
			fail(fmt.Errorf("cancel: %w", err))
		}
		cancelTook = time.Since(start)
	}()
	imported := 0
	var importWG sync.WaitGroup
	start := time.Now()
	for imported < o.Imports {
		n := min(subscriber.MaxImportRows, o.Imports-imported)
		rows := make([]subscriber.ImportRow, n)
		for i := range rows {
			name := fmt.Sprintf("Imported %d", imported+i)
			rows[i] = subscriber.ImportRow{Line: i + 2, Email: fmt.Sprintf("i%d@example.com", imported+i), Name: &name}
		}
		imported += n
		importWG.Add(1)
		go func() {
			defer importWG.Done()
			if _, err := subscriber.NewService(pool).Import(ctx, acctA, rows, nil, nil); err != nil {
				fail(fmt.Errorf("import: %w", err))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		importWG.Wait()
		importTook = time.Since(start)
	}()
	go func() { wg.Wait(); close(done) }()

	// B's suppressions, one at a time, until A's writes are done.
	var delays []time.Duration
	for n := 0; ; n++ {
		select {
		case <-done:
		default:
			d, err := otherTenantDelay(ctx, pool, acctB, fmt.Sprintf("b%d@example.com", n))
			if err != nil {
				return err
			}
			delays = append(delays, d)
			continue
		}
		break
	}
	if len(errs) > 0 {
		return fmt.Errorf("chaos-bulk: %v", errs)
	}

	// What the cancel left (cut short, or rows in flight that came back) the
	// executors' sweep closes; the rows in flight settle.
	deadline := time.Now().Add(5 * time.Minute)
	var c store.CampaignSendCountsRow
	for {
		if c, err = q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acctA, CampaignID: campaignID}); err != nil {
			return err
		}
		if c.Queued+c.Sending == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos-bulk: the cancelled campaign still holds %d queued and %d sending rows", c.Queued, c.Sending)
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return ctx.Err()
		}
	}
	if err := terminate(ctx, q, time.Time{}, child); err != nil {
		return fmt.Errorf("chaos-bulk: the last serve did not exit cleanly on SIGTERM: %w", err)
	}
	if err := invariant.Check(ctx, pool, invariant.Options{Recipients: map[int64]int64{campaignID: int64(o.Recipients)}}); err != nil {
		return fmt.Errorf("chaos-bulk: delivery invariant violated: %w", err)
	}
	unique, dups, _ := snk.stats()
	fmt.Fprintf(stdout, "chaos-bulk: recipients=%d imported=%d cancelled=%d sent=%d duplicates=%d kills=%d cancel=%s import=%s\n",
		o.Recipients, imported, c.Cancelled, c.Sent, dups, o.Kills, cancelTook.Round(time.Millisecond), importTook.Round(time.Millisecond))
	slices.Sort(delays)
	worst, p50 := delays[len(delays)-1], delays[len(delays)/2]
	verdict := "met"
	if worst > time.Second {
		verdict = "NOT met"
	}
	fmt.Fprintf(stdout, "chaos-bulk: other tenant's event delay max=%s p50=%s events=%d (target ≤ 1s: %s)\n",
		worst.Round(time.Millisecond), p50.Round(100*time.Microsecond), len(delays), verdict)
	switch {
	case dups != 0:
		return fmt.Errorf("chaos-bulk: %d second copies", dups)
	case unique < c.Sent:
		return fmt.Errorf("chaos-bulk: %d rows sent but %d delivered", c.Sent, unique)
	case o.MaxDelay > 0 && worst > o.MaxDelay:
		return fmt.Errorf("chaos-bulk: another tenant's event waited %s (bound %s)", worst.Round(time.Millisecond), o.MaxDelay)
	}
	return nil
}

// otherTenantDelay adds a suppression for account and returns how long after its
// commit its event became readable: the wait every reader of the account's events
// (pull, stream, webhook fan-out) shares, since they all stop below the oldest
// running transaction.
func otherTenantDelay(ctx context.Context, pool *pgxpool.Pool, account int64, email string) (time.Duration, error) {
	q := store.New(pool)
	xid, err := q.EventHorizon(ctx)
	if err != nil {
		return 0, err
	}
	if _, _, err := suppression.Add(ctx, pool, account, email, suppression.ReasonManual, "chaos"); err != nil {
		return 0, err
	}
	committed := time.Now()
	for {
		evs, err := q.EventListAfter(ctx, store.EventListAfterParams{AccountID: account, AfterXid: xid - 1, AfterID: math.MaxInt64,
			Types: []string{event.SuppressionCreated}, Lim: 100})
		if err != nil {
			return 0, err
		}
		for _, e := range evs {
			if strings.Contains(string(e.Data), `"`+email+`"`) {
				return time.Since(committed), nil
			}
		}
		if !sleepCtx(ctx, 2*time.Millisecond) {
			return 0, ctx.Err()
		}
	}
}
