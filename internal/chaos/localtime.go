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
	_ "time/tzdata" // the zones the run expects, as the product binary carries them

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/invariant"
)

// localZones are the recipients' attributes.timezone values, given in turn: zones
// at UTC+0 in winter (their rows are due at the run's minute), a missing, an
// unknown and an offset-shaped value (the account's zone, UTC: due then too), and
// zones whose time comes hours later (their rows must wait, untouched).
var localZones = []string{"UTC", "Europe/Lisbon", "Africa/Abidjan", "", "Not/AZone", "UTC+3",
	"America/New_York", "Asia/Tokyo", "Asia/Kathmandu"}

// runLocalTimeChaos is `sendonce-harness chaos -localtime`: a campaign with
// deliver_at_local under kill -9, with the real binary and the idempotent HTTP
// sink. One `sendonce serve` process (API and executor) on a fixed port; through
// its API the run creates a campaign to N recipients spread over localZones, due
// at "HH:MM", the first whole minute at least -lead from now (UTC), and approves
// it. The process is SIGKILLed right after the approval (while the recipient
// list is built), once while every row waits for its time, and the rest of
// -kills while the rows due at that minute are sent.
//
// The due time of each recipient is computed here, independently, with Go's
// zone database (the next occurrence of HH:MM in the recipient's zone, or UTC,
// at or after the approval). End checks: every row due at the minute delivered
// exactly once and none before the minute (the sink's clock); every later row
// still queued, due at exactly its computed time and not delivered; nothing sent
// before the minute; and the delivery invariant with kept counters. It prints
//
//	chaos: localtime at=HH:MM due=W later=L kills=K (build=1 waiting=1 due=k) duplicates=0 lost=0 early=0 due_mismatch=0 later_sent=0 first_after=… last_after=…
//
// (first_after and last_after: the first and last delivery after the minute).
func runLocalTimeChaos(ctx context.Context, bin string, args []string, stdout, stderr io.Writer) error {
	o := chaosOptions{}
	fs := flag.NewFlagSet("chaos -localtime", flag.ContinueOnError)
	o.serviceFlags(fs)
	fs.IntVar(&o.Recipients, "recipients", 2000, "recipients in the campaign")
	fs.IntVar(&o.Kills, "kills", 3, "SIGKILLs in all (at least 3): one in the build, one while every row waits, the rest while the due rows are sent")
	lead := fs.Duration("lead", 45*time.Second, "at least this long from now to the minute the rows are due at")
	latency := fs.Duration("latency", 100*time.Millisecond, "added to every answer of the sink, so kills find messages in flight")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.Provider != "http" {
		return errors.New("chaos -localtime: needs -provider http (the idempotent sink: exactly once is checked)")
	}
	if o.Kills < 3 || o.Recipients < 100 || *lead < 20*time.Second {
		return errors.New("chaos -localtime: needs -kills >= 3, -recipients >= 100 and -lead >= 20s")
	}
	dueKills := o.Kills - 2

	db, err := startChaosDB(ctx)
	if err != nil {
		return err
	}
	defer db.close()
	q := newQueries(db.pool)
	acct, token, err := account.NewService(db.pool).Create(ctx, "chaos-localtime")
	if err != nil {
		return err
	}
	if _, err = q.ChaosSubscribersCreate(ctx, harnessstore.ChaosSubscribersCreateParams{AccountID: acct.ID, N: int32(o.Recipients)}); err != nil {
		return err
	}
	if err := q.ChaosSubscribersSetZones(ctx, harnessstore.ChaosSubscribersSetZonesParams{Zones: localZones, AccountID: acct.ID}); err != nil {
		return err
	}
	run, err := newAPIRun("localtime", bin, o, db.url, token, *latency, stderr)
	if err != nil {
		return err
	}
	defer run.close()
	snk, cl, delivered, kill, start := run.snk, run.cl, run.delivered, run.kill, run.start
	var rate float64 // set once the due rows are counted; 0 (unlimited) before
	serve := func() error { return run.serve(ctx, rate) }

	// The campaign, due at the first whole minute at least -lead away.
	at := time.Now().UTC().Add(*lead).Truncate(time.Minute).Add(time.Minute)
	hhmm := at.Format("15:04")
	if err := serve(); err != nil {
		return err
	}
	approved := time.Now()
	campaignID, err := localCreateCampaign(ctx, cl, hhmm)
	if err != nil {
		return err
	}

	// Killed while the list is built (or just after), then the rows wait.
	sleepCtx(ctx, time.Duration(rand.Int64N(int64(300*time.Millisecond))))
	kill("build")
	if err := serve(); err != nil {
		return err
	}
	var rows []harnessstore.ChaosLocalRowsRow
	for deadline := time.Now().Add(time.Minute); ; {
		if rows, err = q.ChaosLocalRows(ctx, campaignID); err != nil {
			return err
		}
		if len(rows) == o.Recipients {
			break
		}
		if time.Now().After(deadline) || !sleepCtx(ctx, 50*time.Millisecond) {
			return fmt.Errorf("chaos -localtime: %d of %d rows built in a minute", len(rows), o.Recipients)
		}
	}
	due := map[string]time.Time{} // job id → its computed due time
	var dueNow int64
	for _, r := range rows {
		d := localDue(r.Zone, at, approved)
		due[r.JobID] = d
		switch {
		case d.Equal(at):
			dueNow++
		case d.Before(at.Add(time.Hour)):
			return fmt.Errorf("chaos -localtime: zone %q is due at %s, within the run: a clock change today? (run again later)", r.Zone, d)
		}
	}
	if time.Now().After(at.Add(-5 * time.Second)) {
		return fmt.Errorf("chaos -localtime: the build ended %s before the minute: raise -lead", time.Until(at).Round(time.Millisecond))
	}
	later := int64(o.Recipients) - dueNow
	// Spread the due rows over about 3 s per kill, so each kill lands while they are sent.
	rate = max(10, float64(dueNow)/(3*float64(dueKills+1)))
	sleepCtx(ctx, time.Duration(rand.Int64N(int64(time.Until(at)-3*time.Second))))
	if d := delivered(); d != 0 {
		return fmt.Errorf("chaos -localtime: %d delivered %s before the minute", d, time.Until(at).Round(time.Millisecond))
	}
	kill("waiting")
	if err := serve(); err != nil {
		return err
	}

	// The due rows go out at the minute, killed dueKills times.
	for k := range dueKills {
		if run.child == nil {
			if err := serve(); err != nil {
				return err
			}
		}
		if !waitDelivered(ctx, delivered, delivered()+1, time.Until(at)+2*time.Minute) {
			return fmt.Errorf("chaos -localtime: nothing delivered after the minute (sink %d)", delivered())
		}
		sleepCtx(ctx, time.Duration(rand.Int64N(int64(time.Second))))
		kill("due rows")
		if delivered() >= dueNow {
			return fmt.Errorf("chaos -localtime: every due row was delivered before kill %d; lower -rate", k+1)
		}
	}
	if run.child == nil {
		if err := serve(); err != nil {
			return err
		}
	}
	if !waitDelivered(ctx, delivered, dueNow, 5*time.Minute) {
		return fmt.Errorf("chaos -localtime: %d of the %d due rows delivered", delivered(), dueNow)
	}
	// Every due row settled in the database, and nothing later sent meanwhile.
	for deadline := time.Now().Add(time.Minute); ; {
		if rows, err = q.ChaosLocalRows(ctx, campaignID); err != nil {
			return err
		}
		settled := int64(0)
		for _, r := range rows {
			if r.Status != "queued" && r.Status != "sending" {
				settled++
			}
		}
		if settled >= dueNow {
			break
		}
		if time.Now().After(deadline) || !sleepCtx(ctx, 50*time.Millisecond) {
			return fmt.Errorf("chaos -localtime: %d of the %d due rows settled", settled, dueNow)
		}
	}
	sleepCtx(ctx, 2*time.Second) // a later row sent by mistake would show now
	if err := run.terminate(ctx, q); err != nil {
		return err
	}
	if rows, err = q.ChaosLocalRows(ctx, campaignID); err != nil {
		return err
	}

	// End checks.
	deliveries := snk.Deliveries()
	var early, mismatch, laterSent, lost int64
	var first, last time.Duration
	report := func(format string, a ...any) {
		if early+mismatch+laterSent+lost <= 10 {
			fmt.Fprintf(stderr, "chaos: localtime: "+format+"\n", a...)
		}
	}
	for _, r := range rows {
		d, got := deliveries[r.JobID]
		if due[r.JobID].Equal(at) {
			switch {
			case !got || r.Status != "sent":
				lost++
				report("row %s (zone %q) is %s, delivered %v", r.JobID, r.Zone, r.Status, got)
			case d.At.Before(at):
				early++
				report("row %s (zone %q) delivered %s before its time", r.JobID, r.Zone, at.Sub(d.At))
			default:
				after := d.At.Sub(at)
				if first == 0 || after < first {
					first = after
				}
				last = max(last, after)
			}
			continue
		}
		if got || r.Status != "queued" {
			laterSent++
			report("row %s (zone %q, due %s) is %s, delivered %v", r.JobID, r.Zone, due[r.JobID], r.Status, got)
		}
		if !r.NextAttemptAt.Equal(due[r.JobID]) {
			mismatch++
			report("row %s (zone %q) is due at %s, computed %s", r.JobID, r.Zone, r.NextAttemptAt, due[r.JobID])
		}
	}
	st := snk.Stats()
	inv := invariant.Options{Recipients: map[int64]int64{campaignID: int64(o.Recipients)}, KeptCounters: true,
		Delivered: snk.AcceptCounts()}
	if err := invariant.Check(ctx, db.pool, inv); err != nil {
		return fmt.Errorf("chaos -localtime: delivery invariant violated: %w", err)
	}
	fmt.Fprintf(stdout, "chaos: localtime at=%s due=%d later=%d kills=%d (build=1 waiting=1 due=%d) duplicates=%d lost=%d early=%d due_mismatch=%d later_sent=%d first_after=%s last_after=%s\n",
		hhmm, dueNow, later, o.Kills, dueKills, st.Duplicates, lost, early, mismatch, laterSent,
		first.Round(time.Millisecond), last.Round(time.Millisecond))
	fmt.Fprintf(stderr, "chaos: localtime in %s\n", time.Since(start).Round(time.Millisecond))
	if st.Duplicates != 0 || lost != 0 || early != 0 || mismatch != 0 || laterSent != 0 || st.Unique != dueNow {
		return fmt.Errorf("chaos -localtime: violated (%d duplicates, %d lost, %d early, %d due times off, %d later rows sent, %d delivered of %d due)",
			st.Duplicates, lost, early, mismatch, laterSent, st.Unique, dueNow)
	}
	return nil
}

// localDue is when a recipient in zone is due for a campaign delivered at
// at's wall-clock time: its next occurrence in the zone (UTC when the zone is
// missing or unknown to Go's zone database) at or after start.
func localDue(zone string, at, start time.Time) time.Time {
	loc, err := time.LoadLocation(zone)
	if zone == "" || err != nil {
		loc = time.UTC
	}
	s := start.In(loc)
	d := time.Date(s.Year(), s.Month(), s.Day(), at.Hour(), at.Minute(), 0, 0, loc)
	if d.Before(start) {
		d = time.Date(s.Year(), s.Month(), s.Day()+1, at.Hour(), at.Minute(), 0, 0, loc)
	}
	return d
}

// localCreateCampaign creates the campaign through the API (to every confirmed
// subscriber), delivered at hhmm in each recipient's zone, and approves it.
func localCreateCampaign(ctx context.Context, cl *messagesClient, hhmm string) (int64, error) {
	status, _, body, err := cl.do(ctx, http.MethodPost, "/v1/campaigns", "localtime-draft", map[string]any{
		"name": "chaos localtime", "from_email": "news@example.com", "subject": "At " + hhmm + " your time",
		"html_template": "<p>Hi {{.Name}}</p>", "text_template": "Hi {{.Name}}", "deliver_at_local": hhmm})
	var created struct{ ID int64 }
	if err != nil || status != http.StatusCreated || json.Unmarshal(body, &created) != nil {
		return 0, fmt.Errorf("chaos -localtime: POST /v1/campaigns: %d %s %v", status, body, err)
	}
	path := "/v1/campaigns/" + strconv.FormatInt(created.ID, 10) + "/approve"
	status, _, body, err = cl.do(ctx, http.MethodPost, path, "localtime-approve", nil)
	if err != nil || status != http.StatusOK {
		return 0, fmt.Errorf("chaos -localtime: POST %s: %d %s %v", path, status, body, err)
	}
	return created.ID, nil
}
