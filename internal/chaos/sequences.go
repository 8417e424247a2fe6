package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"sort"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/store"
)

// runSequencesChaos is `sendonce-harness chaos -sequences`: the kill -9 test of sequences.
// Subscribers join a list over -join; a sequence triggered by joining it sends,
// waits, sends, waits, sends (short waits); executor processes (`serve --api=false`)
// are SIGKILLed at random moments (during sends and during waits) and restarted;
// midway an opt-out wave takes -optout of the subscribers who joined so far off
// the list (the opt-out's own transaction, as the preference page does). When
// every enrollment has ended and nothing is left to send, it checks, against the
// idempotent HTTP sink:
//
//   - every subscriber who stayed got each of the three steps, once;
//   - nobody who opted out got a step that was not already in flight or sent when
//     the opt-out committed (the set read right after the commit);
//   - the shared delivery invariant (internal/invariant).
//
// and prints
//
//	chaos-sequences: subscribers=N stayed=S opted_out=O steps_delivered=D missing=0 after_optout=0 duplicates=0 kills=K raw_attempts=R elapsed=T
func runSequencesChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	o := chaosOptions{Provider: "http"}
	fs := flag.NewFlagSet("chaos -sequences", flag.ContinueOnError)
	o.serviceFlags(fs)
	fs.IntVar(&o.Recipients, "subscribers", 5000, "subscribers joining the list")
	fs.IntVar(&o.Kills, "kills", 4, "SIGKILLs of every executor process, spread over the run")
	join := fs.Duration("join", time.Minute, "how long the subscribers take to join")
	wait := fs.Duration("wait", 2*time.Second, "each of the two waits of the sequence")
	optout := fs.Float64("optout", 0.2, "the fraction of the joined subscribers the opt-out wave takes off the list")
	executors := fs.Int("executors", 2, "executor processes running at once")
	latency := fs.Duration("latency", 20*time.Millisecond, "the sink's answer time, so kills find sends in flight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Provider != "http" {
		return errors.New("chaos -sequences: only -provider http (the idempotent sink) is checked for exactly once")
	}
	if o.Recipients < 1 || *executors < 1 {
		return errors.New("chaos -sequences: -subscribers and -executors must be at least 1")
	}
	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	acct, seqID, list, err := chaosSequence(ctx, db, *wait)
	if err != nil {
		return err
	}
	snk, err := newChaosSink(o.Provider, *latency, false)
	if err != nil {
		return err
	}
	defer snk.close()
	env := append(o.serveEnv(db.url), snk.env...)
	env = append(env, "SENDONCE_TICK=200ms")
	logTo := io.Discard
	if o.Verbose {
		logTo = stderr
	}

	start := time.Now()
	var joined atomic.Int64
	joinErr := make(chan error, 1)
	go func() { joinErr <- joinOverTime(ctx, db, acct, list, o.Recipients, *join, &joined) }()

	var optedOut []int64
	allowed := map[string]bool{} // opted-out subscribers' steps in flight or sent at the opt-out's commit
	wave := start.Add(*join / 2)
	runFor := *join + 4**wait
	kills := 0
	joinDone := false
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
		last := kills == o.Kills
		// The kills land at random moments spread over the joins and the waits.
		until := time.Now().Add(time.Duration(rand.Int64N(int64(2*runFor/time.Duration(o.Kills+1)) + 1)))
		for last || time.Now().Before(until) {
			if optedOut == nil && time.Now().After(wave) {
				if optedOut, err = optOutWave(ctx, db, acct, list, *optout, allowed); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "chaos-sequences: opt-out wave of %d at %s\n", len(optedOut), time.Since(start).Round(time.Millisecond))
			}
			if !joinDone {
				select {
				case err := <-joinErr:
					if err != nil {
						return err
					}
					joinDone = true
				default:
				}
			}
			if last && joinDone && optedOut != nil {
				done, err := sequenceSettled(ctx, db, seqID)
				if err != nil {
					return err
				}
				if done {
					break
				}
				if time.Since(start) > runFor+15*time.Minute {
					return errors.New("chaos-sequences: not settled after 15 minutes")
				}
			}
			if !sleepCtx(ctx, 100*time.Millisecond) {
				return ctx.Err()
			}
		}
		if last {
			if werr := terminate(ctx, newQueries(db.pool), started, procs...); werr != nil {
				return fmt.Errorf("chaos-sequences: the last executors did not exit cleanly on SIGTERM: %w", werr)
			}
			break
		}
		for _, p := range procs {
			_ = p.Process.Kill()
		}
		for _, p := range procs {
			_ = p.Wait()
		}
		kills++
		fmt.Fprintf(stderr, "chaos-sequences: kill %d at %s, joined %d, delivered %d\n",
			kills, time.Since(start).Round(time.Millisecond), joined.Load(), snk.delivered())
	}
	return checkSequencesChaos(ctx, db, snk, seqID, o.Recipients, optedOut, allowed, kills, time.Since(start), stdout)
}

// chaosSequence makes the account, its list and template, and the active
// sequence: send, wait, send, wait, send.
func chaosSequence(ctx context.Context, db *chaosDB, wait time.Duration) (acct, seqID, list int64, err error) {
	if err = db.pool.QueryRow(ctx, `INSERT INTO accounts (name) VALUES ('chaos-sequences') RETURNING id`).Scan(&acct); err != nil {
		return
	}
	if err = db.pool.QueryRow(ctx, `INSERT INTO lists (account_id, name) VALUES ($1, 'joiners') RETURNING id`, acct).Scan(&list); err != nil {
		return
	}
	var tpl int64
	if err = db.pool.QueryRow(ctx, `INSERT INTO templates (account_id, name, subject, text) VALUES ($1, 'step', 'Step', 'Hello {{.Name}}') RETURNING id`, acct).Scan(&tpl); err != nil {
		return
	}
	send := sequence.Step{Type: sequence.StepSend, TemplateID: tpl, FromEmail: "series@example.com"}
	w := sequence.Step{Type: sequence.StepWait, Duration: wait.String()}
	svc := sequence.NewService(db.pool)
	seq, err := svc.Create(ctx, acct, sequence.Definition{Name: "chaos", Trigger: sequence.Trigger{Type: sequence.TriggerListJoined, ListID: &list},
		Steps: []sequence.Step{send, w, send, w, send}})
	if err != nil {
		return
	}
	_, err = svc.Transition(ctx, acct, seq.ID, sequence.Activate)
	return acct, seq.ID, list, err
}

// joinOverTime adds n confirmed subscribers to the list, evenly over d, in small
// transactions as sign-ups arrive.
func joinOverTime(ctx context.Context, db *chaosDB, acct, list int64, n int, d time.Duration, joined *atomic.Int64) error {
	const chunk = 25
	steps := (n + chunk - 1) / chunk
	for i := 0; i < steps; i++ {
		from, to := i*chunk+1, min((i+1)*chunk, n)
		_, err := db.pool.Exec(ctx, `WITH s AS (
			INSERT INTO subscribers (account_id, email, email_lower, name, status)
			SELECT $1, 'j' || g || '@example.com', 'j' || g || '@example.com', 'J ' || g, 'confirmed'
			FROM generate_series($3::int, $4::int) g RETURNING id)
			INSERT INTO list_members (list_id, subscriber_id, account_id) SELECT $2, id, $1 FROM s`, acct, list, from, to)
		if err != nil {
			return err
		}
		joined.Store(int64(to))
		if !sleepCtx(ctx, d/time.Duration(steps)) {
			return ctx.Err()
		}
	}
	return nil
}

// optOutWave takes a fraction of the members off the list in one opt-out
// transaction (membership and the flag on their unsettled sends, as the
// preference page does), then records which of their steps were in flight or
// sent at the commit: only those may still reach them.
func optOutWave(ctx context.Context, db *chaosDB, acct, list int64, fraction float64, allowed map[string]bool) ([]int64, error) {
	var ids []int64
	err := postgres.InTx(ctx, db.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT subscriber_id FROM list_members WHERE list_id = $1 AND status = 'subscribed'
			ORDER BY random() LIMIT greatest(1, (SELECT count(*) FROM list_members WHERE list_id = $1) * $2::float8)::int`, list, fraction)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		q := store.New(tx)
		for _, id := range ids {
			if _, err := q.MembershipUnsubscribeLists(ctx, store.MembershipUnsubscribeListsParams{Source: "chaos",
				AccountID: acct, SubscriberID: id, ListIds: []int64{list}}); err != nil {
				return err
			}
		}
		_, err = q.SendSuppressLeftLists(ctx, store.SendSuppressLeftListsParams{AccountID: acct, SubscriberIds: ids})
		return err
	})
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT job_id FROM sends WHERE account_id = $1 AND subscriber_id = ANY($2)
		AND status IN ('sending', 'sent')`, acct, ids)
	if err != nil {
		return nil, err
	}
	jobs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, j := range jobs {
		allowed[j] = true
	}
	return ids, err
}

// sequenceSettled: no member left to enroll, no enrollment running, nothing queued
// or in flight in the sequence's step campaigns.
func sequenceSettled(ctx context.Context, db *chaosDB, seqID int64) (bool, error) {
	var busy bool
	err := db.pool.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM sequence_enrollments WHERE sequence_id = $1 AND state = 'active')
		OR EXISTS (SELECT 1 FROM sequences q JOIN list_members m ON m.list_id = q.list_id AND m.status = 'subscribed'
		           WHERE q.id = $1 AND NOT EXISTS (SELECT 1 FROM sequence_enrollments e WHERE e.sequence_id = $1 AND e.subscriber_id = m.subscriber_id))
		OR EXISTS (SELECT 1 FROM sends s JOIN sequence_steps st ON st.campaign_id = s.campaign_id
		           WHERE st.sequence_id = $1 AND s.status IN ('queued', 'sending'))`, seqID).Scan(&busy)
	return !busy, err
}

func checkSequencesChaos(ctx context.Context, db *chaosDB, snk *chaosSink, seqID int64, n int, optedOut []int64,
	allowed map[string]bool, kills int, elapsed time.Duration, stdout io.Writer) error {
	got := map[string]bool{}
	delivered := map[string]int{}
	for _, k := range snk.http.Keys() {
		got[k] = true
		delivered[k] = 1
	}
	out := map[int64]bool{}
	for _, id := range optedOut {
		out[id] = true
	}
	rows, err := db.pool.Query(ctx, `SELECT subscriber_id FROM list_members m JOIN sequences q ON q.list_id = m.list_id WHERE q.id = $1`, seqID)
	if err != nil {
		return err
	}
	subs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i] < subs[j] })
	var missing, afterOptout, stepsDelivered int
	var problems []error
	for _, s := range subs {
		for _, step := range []int{0, 2, 4} {
			job := sequence.JobID(seqID, step, s)
			switch {
			case !out[s] && !got[job]:
				missing++
				if missing <= 5 {
					problems = append(problems, fmt.Errorf("%s: never delivered to a subscriber who stayed", job))
				}
			case out[s] && got[job] && !allowed[job]:
				afterOptout++
				if afterOptout <= 5 {
					problems = append(problems, fmt.Errorf("%s: delivered after the opt-out committed", job))
				}
			}
			if got[job] {
				stepsDelivered++
			}
		}
	}
	unique, dups, raw := snk.stats()
	if dups != 0 {
		problems = append(problems, fmt.Errorf("%d second copies", dups))
	}
	if int64(stepsDelivered) != unique {
		problems = append(problems, fmt.Errorf("the sink holds %d keys, %d of them this sequence's", unique, stepsDelivered))
	}
	if err := invariant.Check(ctx, db.pool, invariant.Options{Delivered: delivered}); err != nil {
		problems = append(problems, err)
	}
	fmt.Fprintf(stdout, "chaos-sequences: subscribers=%d stayed=%d opted_out=%d steps_delivered=%d missing=%d after_optout=%d duplicates=%d kills=%d raw_attempts=%d elapsed=%s\n",
		n, len(subs)-len(optedOut), len(optedOut), stepsDelivered, missing, afterOptout, dups, kills, raw, elapsed.Round(time.Millisecond))
	if len(problems) > 0 {
		return fmt.Errorf("chaos-sequences: %w", errors.Join(problems...))
	}
	return nil
}
