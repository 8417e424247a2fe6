package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/sendonce/sendonce/internal/abtest"
	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
)

// abSubjects are the variants' subjects, each distinct from the campaign's own
// (abBaseSubject): what the sink receives tells which content was rendered.
var abSubjects = []string{"Spring sale (A)", "20% off until Sunday (B)", "Last chance (C)"}

const abBaseSubject = "The campaign's own subject"

// runABChaos is `sendonce-harness chaos -ab`: an A/B test under kill -9, with the
// real binary and the idempotent HTTP sink. One `sendonce serve` process (API and
// executor) on a fixed port; through its API the run creates a campaign to N
// recipients, makes it an A/B test in mode test (three variants with distinct
// subjects, -test-percent, metric manual) and approves it. Then:
//
//   - test phase: the process is SIGKILLed while test-group rows are being sent
//     (and restarted), at least once; the run waits until the whole test group is
//     delivered and checks nobody of the rest got mail without a winner;
//   - winner: POST /v1/campaigns/{id}/winner with a random variant; with -kills ≥ 3
//     the process is SIGKILLed a few milliseconds after the call is sent, so the
//     call may be cut and retried after the restart: it must answer 200, or 409
//     naming the same winner (the cut call committed). A second choice of another
//     variant must be 409 naming the first;
//   - the winner's send: SIGKILLed while the rest is being sent, restarted, until
//     the campaign is sent (the last process stops on SIGTERM).
//
// End checks: every recipient delivered exactly once by the sink; every row has
// one variant: a test-group row (by the build's hash) the variant its hash gives,
// a rest row the winner, and no rest row sent before the winner was chosen; the
// subject and address the sink received for each job id are those of the row's
// variant and recipient; and the delivery invariant with kept counters. It prints
//
//	chaos: ab test_group=T rest=R winner=W kills=K (test=a winner_call=b rest=c) winner_answer=S duplicates=0 lost=0 variant_mismatch=0 raw_attempts=N
//
// (winner_answer …-after-cut: the call had no answer when the kill came and was
// retried after the restart; 409-same-after-cut: the cut call had committed.)
func runABChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	o := chaosOptions{}
	fs := flag.NewFlagSet("chaos -ab", flag.ContinueOnError)
	o.serviceFlags(fs)
	fs.IntVar(&o.Recipients, "recipients", 2000, "recipients in the campaign")
	fs.IntVar(&o.Kills, "kills", 3, "SIGKILLs in all (at least 2): about a third in the test phase, one at the winner's call (from 3 on), the rest during the winner's send")
	testPercent := fs.Int("test-percent", 20, "the test group's share of the audience (1–50)")
	latency := fs.Duration("latency", 100*time.Millisecond, "added to every answer of the sink, so kills find messages in flight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Provider != "http" {
		return errors.New("chaos -ab: needs -provider http (the idempotent sink: exactly once is checked)")
	}
	if o.Kills < 2 || o.Recipients < 100 || *testPercent < abtest.MinTestPercent || *testPercent > abtest.MaxTestPercent {
		return errors.New("chaos -ab: needs -kills >= 2, -recipients >= 100 and -test-percent 1 to 50")
	}
	testKills := max(1, (o.Kills+1)/3)
	winnerKills := 0
	if o.Kills >= 3 {
		winnerKills = 1
	}
	restKills := o.Kills - testKills - winnerKills

	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	q := newQueries(db.pool)
	acct, token, err := account.NewService(db.pool).Create(ctx, "chaos-ab")
	if err != nil {
		return err
	}
	if _, err = q.ChaosSubscribersCreate(ctx, harnessstore.ChaosSubscribersCreateParams{AccountID: acct.ID, N: int32(o.Recipients)}); err != nil {
		return err
	}
	run, err := newAPIRun("ab", bin, o, db.url, token, *latency, stderr)
	if err != nil {
		return err
	}
	defer run.close()
	snk, cl, delivered := run.snk, run.cl, run.delivered
	serve := func(rate float64) error { return run.serve(ctx, rate) }
	kill := run.kill
	start := run.start

	// The campaign, its test and its approval, through the API. The test group
	// is spread over about 3 s per generation (by its expected size), so each
	// kill lands while its rows are sent.
	testRate := max(10, float64(o.Recipients**testPercent/100)/(3*float64(testKills+1)))
	if err := serve(testRate); err != nil {
		return err
	}
	campaignID, err := abCreateCampaign(ctx, cl, *testPercent)
	if err != nil {
		return err
	}
	testGroup, err := q.ChaosABTestGroupSize(ctx, campaignID)
	if err != nil {
		return err
	}
	rest := int64(o.Recipients) - testGroup
	if testGroup == 0 || rest == 0 {
		return fmt.Errorf("chaos -ab: a test group of %d and a rest of %d: raise -recipients", testGroup, rest)
	}

	// Test phase.
	for k := range testKills {
		if k > 0 {
			if err := serve(testRate); err != nil {
				return err
			}
		}
		if !waitDelivered(ctx, delivered, delivered()+1, 2*time.Minute) {
			return fmt.Errorf("chaos -ab: nothing delivered in the test phase (sink %d)", delivered())
		}
		sleepCtx(ctx, time.Duration(rand.Int64N(int64(time.Second))))
		kill("test phase")
		if d := delivered(); d >= testGroup {
			return fmt.Errorf("chaos -ab: the test group (%d) was delivered before test-phase kill %d; lower -rate", testGroup, k+1)
		}
	}

	// The whole test group goes out; nobody of the rest without a winner.
	restRate := max(50, float64(rest)/(3*float64(restKills+1)))
	if err := serve(restRate); err != nil {
		return err
	}
	if !waitDelivered(ctx, delivered, testGroup, 2*time.Minute) {
		return fmt.Errorf("chaos -ab: the test group of %d was not delivered (sink %d)", testGroup, delivered())
	}
	sleepCtx(ctx, 2*time.Second) // a held row sent by mistake would show now
	if d := delivered(); d != testGroup {
		return fmt.Errorf("chaos -ab: %d delivered with no winner chosen; the test group is %d", d, testGroup)
	}

	// The winner, perhaps cut by a kill and retried.
	winner := int16(1 + rand.IntN(len(abSubjects)))
	type answer struct {
		status int
		body   []byte
		err    error
	}
	answered := make(chan answer, 1)
	winnerPath := "/v1/campaigns/" + strconv.FormatInt(campaignID, 10) + "/winner"
	go func() {
		status, _, body, err := cl.do(ctx, http.MethodPost, winnerPath, "", map[string]string{"variant": abtest.Name(winner)})
		answered <- answer{status, body, err}
	}()
	var a answer
	cut := false
	if winnerKills > 0 {
		sleepCtx(ctx, time.Duration(rand.Int64N(int64(20*time.Millisecond))))
		select {
		case a = <-answered: // answered before the kill
		default:
			cut = true // in flight (or not yet sent): retried after the restart
		}
		kill("winner's call")
		if err := serve(restRate); err != nil {
			return err
		}
	}
	if winnerKills == 0 || cut {
		a = <-answered
	}
	if a.err != nil {
		return fmt.Errorf("chaos -ab: POST %s: %w", winnerPath, a.err)
	}
	winnerAnswer := strconv.Itoa(a.status)
	switch {
	case a.status == http.StatusOK && abWinnerOf(a.body) == abtest.Name(winner):
	case a.status == http.StatusConflict && abWinnerOf(a.body) == abtest.Name(winner) && cut:
		winnerAnswer = "409-same" // the cut call had committed; its retry finds the same winner
	default:
		return fmt.Errorf("chaos -ab: POST %s {variant: %s} answered %d %s", winnerPath, abtest.Name(winner), a.status, a.body)
	}
	other := abtest.Name(winner%int16(len(abSubjects)) + 1)
	if status, _, body, err := cl.do(ctx, http.MethodPost, winnerPath, "", map[string]string{"variant": other}); err != nil ||
		status != http.StatusConflict || abWinnerOf(body) != abtest.Name(winner) {
		return fmt.Errorf("chaos -ab: a second choice (%s) answered %d %s %v; want 409 naming %s", other, status, body, err, abtest.Name(winner))
	}
	if w, err := q.ChaosABWinner(ctx, campaignID); err != nil || w == nil || *w != winner {
		return fmt.Errorf("chaos -ab: the campaign's winner is %v (%v), chosen %d", w, err, winner)
	}

	// The winner's send to the rest, killed restKills times.
	for k := range restKills {
		if run.child == nil {
			if err := serve(restRate); err != nil {
				return err
			}
		}
		if !waitDelivered(ctx, delivered, max(delivered(), testGroup)+1, 2*time.Minute) {
			return fmt.Errorf("chaos -ab: nothing of the rest delivered (sink %d)", delivered())
		}
		sleepCtx(ctx, time.Duration(rand.Int64N(int64(time.Second))))
		kill("winner's send")
		if st, _ := q.ChaosCampaignStatus(ctx, campaignID); st == "sent" {
			return fmt.Errorf("chaos -ab: the campaign was sent before rest kill %d; lower -rate", k+1)
		}
	}
	if run.child == nil {
		if err := serve(restRate); err != nil {
			return err
		}
	}
	if err := waitSent(ctx, q, campaignID, 15*time.Minute); err != nil {
		return err
	}
	if err := run.terminate(ctx, q); err != nil {
		return err
	}

	// End checks.
	mismatch, err := abCheckRows(ctx, q, campaignID, winner, testGroup, snk.Deliveries(), stderr)
	if err != nil {
		return err
	}
	st := snk.Stats()
	lost := int64(o.Recipients) - st.Unique
	counts, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acct.ID, CampaignID: campaignID})
	if err != nil {
		return err
	}
	inv := invariant.Options{Recipients: map[int64]int64{campaignID: int64(o.Recipients)}, KeptCounters: true,
		Delivered: snk.AcceptCounts()}
	if err := invariant.Check(ctx, db.pool, inv); err != nil {
		return fmt.Errorf("chaos -ab: delivery invariant violated: %w", err)
	}
	if cut {
		winnerAnswer += "-after-cut"
	}
	fmt.Fprintf(stdout, "chaos: ab test_group=%d rest=%d winner=%s kills=%d (test=%d winner_call=%d rest=%d) winner_answer=%s duplicates=%d lost=%d variant_mismatch=%d raw_attempts=%d\n",
		testGroup, rest, abtest.Name(winner), testKills+winnerKills+restKills, testKills, winnerKills, restKills, winnerAnswer,
		st.Duplicates, lost, mismatch, st.RawAttempts)
	fmt.Fprintf(stderr, "chaos: ab in %s; rows sent %d\n", time.Since(start).Round(time.Millisecond), counts.Sent)
	if st.Duplicates != 0 || lost != 0 || mismatch != 0 || counts.Sent != int64(o.Recipients) {
		return fmt.Errorf("chaos -ab: exactly once or one variant each violated (%d duplicates, %d lost, %d variant mismatches, %d rows sent)",
			st.Duplicates, lost, mismatch, counts.Sent)
	}
	return nil
}

// abCreateCampaign creates the campaign through the API (to every confirmed
// subscriber), makes it an A/B test with a test group and the manual metric, and
// approves it to start now.
func abCreateCampaign(ctx context.Context, cl *messagesClient, testPercent int) (int64, error) {
	status, _, body, err := cl.do(ctx, http.MethodPost, "/v1/campaigns", "ab-draft", map[string]any{
		"name": "chaos ab", "from_email": "news@example.com", "subject": abBaseSubject,
		"html_template": "<p>Hi {{.Name}}</p>", "text_template": "Hi {{.Name}}"})
	var created struct{ ID int64 }
	if err != nil || status != http.StatusCreated || json.Unmarshal(body, &created) != nil {
		return 0, fmt.Errorf("chaos -ab: POST /v1/campaigns: %d %s %v", status, body, err)
	}
	path := "/v1/campaigns/" + strconv.FormatInt(created.ID, 10)
	variants := make([]map[string]string, len(abSubjects))
	for i, s := range abSubjects {
		variants[i] = map[string]string{"subject": s}
	}
	status, _, body, err = cl.do(ctx, http.MethodPut, path+"/ab-test", "", map[string]any{
		"mode": "test", "test_percent": testPercent, "wait_seconds": abtest.MinWaitSeconds, "metric": abtest.MetricManual,
		"variants": variants})
	if err != nil || status != http.StatusOK {
		return 0, fmt.Errorf("chaos -ab: PUT %s/ab-test: %d %s %v", path, status, body, err)
	}
	status, _, body, err = cl.do(ctx, http.MethodPost, path+"/approve", "ab-approve", nil)
	if err != nil || status != http.StatusOK {
		return 0, fmt.Errorf("chaos -ab: POST %s/approve: %d %s %v", path, status, body, err)
	}
	return created.ID, nil
}

// abWinnerOf is the winner an answer of POST /winner names: the test's winner
// (200) or the problem's winner member (409).
func abWinnerOf(body []byte) string {
	var v struct {
		Winner *string `json:"winner"`
	}
	if json.Unmarshal(body, &v) != nil || v.Winner == nil {
		return ""
	}
	return *v.Winner
}

// waitDelivered waits until the sink has delivered at least n.
func waitDelivered(ctx context.Context, delivered func() int64, n int64, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		if delivered() >= n {
			return true
		}
		if !sleepCtx(ctx, 5*time.Millisecond) {
			return false
		}
	}
	return false
}

// abCheckRows checks every row against the hashes, the winner and what the sink
// received for its job id, and returns the number of rows that do not match
// (each reported on stderr, the first 10).
func abCheckRows(ctx context.Context, q *queries, campaignID int64, winner int16, testGroup int64,
	deliveries map[string]sink.Delivery, stderr io.Writer) (int64, error) {
	rows, err := q.ChaosABRows(ctx, campaignID)
	if err != nil {
		return 0, err
	}
	var bad, inTest int64
	report := func(format string, a ...any) {
		bad++
		if bad <= 10 {
			fmt.Fprintf(stderr, "chaos: ab mismatch: "+format+"\n", a...)
		}
	}
	for _, r := range rows {
		if r.InTest {
			inTest++
		}
		if r.Variant == nil {
			report("row %s has no variant", r.JobID)
			continue
		}
		want := winner
		if r.InTest {
			want = r.HashedVariant
		}
		if *r.Variant != want {
			report("row %s (test group %v) has variant %s, want %s", r.JobID, r.InTest, abtest.Name(*r.Variant), abtest.Name(want))
			continue
		}
		if !r.InTest && r.SentBeforeWinner {
			report("row %s of the rest was sent before the winner was chosen", r.JobID)
			continue
		}
		d, ok := deliveries[r.JobID]
		if !ok {
			continue // counted as lost by the sink's figures
		}
		var m struct{ To, Subject string }
		if err := json.Unmarshal(d.Body, &m); err != nil {
			return 0, fmt.Errorf("chaos -ab: the sink's body for %s: %w", r.JobID, err)
		}
		if m.Subject != abSubjects[*r.Variant-1] || m.To != r.Email {
			report("row %s of variant %s (%s) was received as %q to %s", r.JobID, abtest.Name(*r.Variant), r.Email, m.Subject, m.To)
		}
	}
	if inTest != testGroup {
		report("the rows put %d in the test group, the subscribers' hashes %d", inTest, testGroup)
	}
	return bad, nil
}
