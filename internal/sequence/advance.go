package sequence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sendwindow"
	"github.com/sendonce/sendonce/internal/store"
)

// Event types of sequences (internal/event's catalogue lists them too).
const (
	EventStepSent = "sequence.step_sent"
	EventExited   = "sequence.exited"
)

// Advancer moves due enrollments along. Every executor process runs one; their
// claims are SKIP LOCKED, so replicas take disjoint enrollments. Each batch is one
// transaction: the steps it evaluates, the send rows it queues, the timeline and
// the events commit together or not at all, so a crash anywhere in it leaves the
// enrollments as they were, to be evaluated again (and a step's send row, keyed by
// its job id, can only ever be queued once).
type Advancer struct {
	Pool *pgxpool.Pool
	Log  *slog.Logger
	// Now is the clock (nil: time.Now); tests move it instead of sleeping.
	Now func() time.Time
	// Batch is how many enrollments one transaction advances (default 100), and
	// PerAccount how many of them one account may take (default Batch/2, at least 1).
	Batch, PerAccount int
	// Parallel is how many batches one Tick advances at once (default 3); each
	// holds a connection while it runs.
	Parallel int
	// SweepOverlap is how far before the last sweep a list trigger's sweep looks
	// again, for memberships whose transaction committed after it (default 10m).
	SweepOverlap time.Duration
	// SegmentChunk is how many of an account's subscribers one pass of the segment
	// sweep reads for one sequence (default 5000), and SegmentPerAccount how many of
	// an account's segment-triggered sequences one pass sweeps (default 1).
	SegmentChunk, SegmentPerAccount int
}

func (a *Advancer) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Advancer) log() *slog.Logger {
	if a.Log != nil {
		return a.Log
	}
	return slog.Default()
}

// Tick runs the trigger sweep and advances due enrollments until a claim finds
// none due, and reports how many enrollments it advanced. (A batch can come back
// short while more is due: one account may take only PerAccount of it.)
//
// A failed sweep is reported with the result but never stops the advance: enrollments
// already due, of every account, do not wait on one sequence's trigger.
func (a *Advancer) Tick(ctx context.Context) (int, error) {
	sweepErr := a.Sweep(ctx)
	// Evaluating a step is a few round trips per enrollment; Parallel claimers
	// (disjoint by SKIP LOCKED) keep the connection busy instead of waiting on them.
	var (
		mu    sync.Mutex
		total int
		errs  []error
		wg    sync.WaitGroup
	)
	for range a.parallel() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, err := a.Advance(ctx)
				mu.Lock()
				total += n
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil || n == 0 || ctx.Err() != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return total, errors.Join(append(errs, sweepErr)...)
}

func (a *Advancer) parallel() int {
	if a.Parallel > 0 {
		return a.Parallel
	}
	return 3
}

func (a *Advancer) batch() int {
	if a.Batch > 0 {
		return a.Batch
	}
	return 100
}

// Sweep enrolls, for every active list-triggered sequence, the members whose
// membership became subscribed since its last sweep, and for every date-triggered
// one (at most once a minute), the subscribers whose date falls before a day ahead.
// Each kind of sweep, and each sequence's, fails alone: the others still run.
func (a *Advancer) Sweep(ctx context.Context) error {
	errDates, errSegments := a.sweepDates(ctx), a.sweepSegments(ctx)
	if err := a.sweepLists(ctx); err != nil {
		return errors.Join(errDates, errSegments, err)
	}
	return errors.Join(errDates, errSegments)
}

// sweepLists enrolls, for every active list-triggered sequence, the members whose
// membership became subscribed since its last sweep.
func (a *Advancer) sweepLists(ctx context.Context) error {
	q := store.New(a.Pool)
	seqs, err := q.SequenceListSweep(ctx)
	if err != nil {
		return err
	}
	overlap := a.SweepOverlap
	if overlap <= 0 {
		overlap = 10 * time.Minute
	}
	var errs []error
	for _, s := range seqs {
		now := a.now()
		since := now.Add(-overlap)
		if s.SweptAt != nil {
			since = s.SweptAt.Add(-overlap)
		}
		if s.ActivatedAt != nil && since.Before(*s.ActivatedAt) {
			since = *s.ActivatedAt
		}
		err := postgres.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
			q := store.New(tx)
			if _, err := q.SequenceSweepList(ctx, store.SequenceSweepListParams{AccountID: s.AccountID, SequenceID: s.ID,
				Trigger: s.TriggerType, ListID: *s.ListID, Since: since, Now: &now}); err != nil {
				return err
			}
			return q.SequenceSwept(ctx, store.SequenceSweptParams{ID: s.ID, SweptAt: &now})
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep sequence %d: %w", s.ID, err)) // the others are still swept
		}
	}
	return errors.Join(errs...)
}

// stepRun names a step campaign: a send step's position and the run it carries.
type stepRun struct{ step, run int }

// loaded is a sequence as the advancer needs it, read once per batch.
type loaded struct {
	row       store.SequenceForAdvanceRow
	steps     []Step
	campaigns map[stepRun]int64
	loc       *time.Location
	late      time.Duration
}

// Advance claims one batch of due enrollments and evaluates each as far as it
// goes now (through sends and passed conditions, up to a wait), in one
// transaction, and reports how many it claimed. An enrollment whose evaluation
// fails is rolled back alone (a savepoint) and tried again a minute later.
func (a *Advancer) Advance(ctx context.Context) (int, error) {
	ctx = context.WithoutCancel(ctx) // a claimed batch is finished or rolled back, never stranded
	n := a.batch()
	per := a.PerAccount
	if per <= 0 {
		per = max(1, n/2)
	}
	now := a.now()
	claimed, busy := 0, false
	err := postgres.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		rows, err := q.SequenceClaimDue(ctx, store.SequenceClaimDueParams{Now: &now, PerAccount: int32(per), N: int32(n)})
		if err != nil {
			return err
		}
		claimed = len(rows)
		seqs := map[int64]*loaded{}
		for _, r := range rows {
			s := seqs[r.SequenceID]
			if s == nil {
				if s, err = load(ctx, q, r.SequenceID); err != nil {
					return err
				}
				seqs[r.SequenceID] = s
			}
			if s.row.Status != StatusActive {
				// Paused or archived after the claim read it active: the
				// enrollment stays where it is (an archived one is ended by the
				// archive's batches, which wait for this transaction).
				continue
			}
			sp, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			if err := a.advanceOne(ctx, sp, s, r, now); err != nil {
				_ = sp.Rollback(ctx)
				// The enrollment stays at its step, due again soon: at once when an
				// opt-out (or another change) held its subscriber's rows, a minute
				// later when the evaluation failed.
				retry := time.Minute
				if postgres.IsCode(err, pgerrcode.LockNotAvailable) {
					retry = 0
				} else {
					a.log().Error("sequence step failed; retried in a minute", "sequence_id", r.SequenceID,
						"enrollment_id", r.ID, "step", r.Step, "err", err)
				}
				busy = busy || retry == 0
				if err := q.SequenceEnrollmentKeep(ctx, store.SequenceEnrollmentKeepParams{ID: r.ID,
					DueAt: now.Add(retry), Now: &now}); err != nil {
					return err
				}
				continue
			}
			if err := sp.Commit(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if busy && err == nil {
		// Enrollments left for a lock are due again at once; a Tick that looped on
		// them would spin while the opt-out holding it runs, so this claim reports
		// no progress for them and the next tick takes them.
		return 0, nil
	}
	return claimed, err
}

func load(ctx context.Context, q *store.Queries, id int64) (*loaded, error) {
	// Transitions wait for this batch, or this batch for a transition, then reads
	// its outcome: no enrollment is advanced after its sequence was paused or
	// archived.
	if err := q.SequenceAdvanceLock(ctx, int32(id)); err != nil {
		return nil, err
	}
	row, err := q.SequenceForAdvance(ctx, id)
	if err != nil {
		return nil, err
	}
	s := &loaded{row: row, campaigns: map[stepRun]int64{}}
	if err := json.Unmarshal(row.Steps, &s.steps); err != nil {
		return nil, fmt.Errorf("sequence %d steps: %w", id, err)
	}
	if s.loc, err = time.LoadLocation(row.TimeZone); err != nil {
		s.loc = time.UTC
	}
	if row.LateAfter.Valid {
		s.late = time.Duration(row.LateAfter.Microseconds)*time.Microsecond + time.Duration(row.LateAfter.Days)*24*time.Hour
	}
	return s, s.readCampaigns(ctx, q)
}

func (s *loaded) readCampaigns(ctx context.Context, q *store.Queries) error {
	cs, err := q.SequenceStepCampaigns(ctx, store.SequenceStepCampaignsParams{AccountID: s.row.AccountID, SequenceID: s.row.ID})
	if err != nil {
		return err
	}
	for _, c := range cs {
		s.campaigns[stepRun{int(c.Position), int(c.Run)}] = c.CampaignID
	}
	return nil
}

// campaign is the campaign of send step `step` in run `run`. A later run's
// campaigns are made when its first enrollment reaches a send step, under the
// sequence's run lock (held to the batch's commit), from the steps as loaded.
func (s *loaded) campaign(ctx context.Context, q *store.Queries, step, run int) (int64, error) {
	if id, ok := s.campaigns[stepRun{step, run}]; ok {
		return id, nil
	}
	if run > 1 {
		if err := q.SequenceRunLock(ctx, int32(s.row.ID)); err != nil {
			return 0, err
		}
		if err := s.readCampaigns(ctx, q); err != nil {
			return 0, err
		}
		if _, ok := s.campaigns[stepRun{step, run}]; !ok {
			seq := Sequence{ID: s.row.ID, Definition: Definition{Trigger: Trigger{ListID: s.row.ListID}, Steps: s.steps}}
			if err := upsertRunCampaigns(ctx, q, s.row.AccountID, seq, campaignStatus(s.row.Status), int32(run)); err != nil {
				return 0, err
			}
			if err := s.readCampaigns(ctx, q); err != nil {
				return 0, err
			}
		}
	}
	id, ok := s.campaigns[stepRun{step, run}]
	if !ok {
		return 0, fmt.Errorf("step %d has no campaign for run %d", step, run)
	}
	return id, nil
}

// JobID is the job id of a step's send in run 1 of an enrollment: the provider's
// idempotency key.
func JobID(sequenceID int64, step int, subscriberID int64) string {
	return fmt.Sprintf("sequence:%d:%d:%d", sequenceID, step, subscriberID)
}

// RunJobID is the job id of a step's send in run `run` of a re-entered enrollment:
// run 1 keeps JobID's form (the rows queued before re-entry existed stay valid),
// a later run adds ":<run>", so each run's step is sent once.
func RunJobID(sequenceID int64, step int, subscriberID int64, run int) string {
	if run <= 1 {
		return JobID(sequenceID, step, subscriberID)
	}
	return fmt.Sprintf("sequence:%d:%d:%d:%d", sequenceID, step, subscriberID, run)
}

// enrollment is the state advanceOne moves along.
type enrollment struct {
	store.SequenceClaimDueRow
	step int
}

// advanceOne evaluates one enrollment from its current step until it must wait
// or ends, then saves it.
func (a *Advancer) advanceOne(ctx context.Context, db pgx.Tx, s *loaded, r store.SequenceClaimDueRow, now time.Time) error {
	q := store.New(db)
	e := enrollment{SequenceClaimDueRow: r, step: int(r.Step)}
	logLine := func(outcome string, reason, job *string) error {
		return q.SequenceLog(ctx, store.SequenceLogParams{AccountID: r.AccountID, SequenceID: r.SequenceID,
			EnrollmentID: r.ID, Step: int32(e.step), Outcome: outcome, Reason: reason, JobID: job, Now: &now, Run: r.Run})
	}
	end := func(state, reason string) error {
		var rp *string
		if state == "exited" {
			rp = &reason
		}
		if err := logLine(map[string]string{"exited": "exited", "completed": "completed"}[state], rp, nil); err != nil {
			return err
		}
		if err := event.Emit(ctx, db, r.AccountID, EventExited, map[string]any{"sequence_id": r.SequenceID,
			"enrollment_id": r.ID, "subscriber_id": r.SubscriberID, "email": r.Email, "step": e.step,
			"reason": reason}); err != nil {
			return err
		}
		return q.SequenceEnrollmentSave(ctx, store.SequenceEnrollmentSaveParams{ID: r.ID, Step: int32(e.step),
			State: state, DueAt: now, ExitReason: rp, Now: &now})
	}
	wait := func(until time.Time, waitingFor string, reason string) error {
		if err := logLine("waiting", &reason, nil); err != nil {
			return err
		}
		return q.SequenceEnrollmentSave(ctx, store.SequenceEnrollmentSaveParams{ID: r.ID, Step: int32(e.step),
			State: "active", DueAt: until, WaitingFor: &waitingFor, EventSeen: false, Now: &now})
	}
	// e.DueAt stays when the enrollment moves on: the steps that follow a wait
	// were due when it ended, which is what late_after measures.
	next := func() { e.step++; e.WaitingFor = nil; e.EventSeen = false }
	for guard := 0; guard <= len(s.steps)+1; guard++ {
		if e.step >= len(s.steps) {
			return end("completed", "completed")
		}
		st := s.steps[e.step]
		switch st.Type {
		case StepSend:
			if s.late > 0 && now.Sub(e.DueAt) > s.late {
				reason := "late: due " + e.DueAt.UTC().Format(time.RFC3339)
				if err := logLine("skipped", &reason, nil); err != nil {
					return err
				}
				next()
				continue
			}
			if reason, err := a.excluded(ctx, q, s, r); err != nil {
				return err
			} else if reason != "" {
				return end("exited", reason)
			}
			campaignID, err := s.campaign(ctx, q, e.step, int(r.Run))
			if err != nil {
				return err
			}
			job := RunJobID(r.SequenceID, e.step, r.SubscriberID, int(r.Run))
			if _, err := q.SequenceSendInsert(ctx, store.SequenceSendInsertParams{CampaignID: campaignID,
				AccountID: r.AccountID, SubscriberID: r.SubscriberID, Email: r.Email, JobID: job}); postgres.NoRows(err) {
				// Queued before: nothing to add (the job id keeps it one send).
			} else if err != nil {
				return err
			} else {
				if hasData(r.Data) {
					if err := q.SequenceSendDataInsert(ctx, store.SequenceSendDataInsertParams{AccountID: r.AccountID,
						JobID: job, Data: r.Data, Now: &now}); err != nil {
						return err
					}
				}
				if err := logLine("sent", nil, &job); err != nil {
					return err
				}
				if err := event.Emit(ctx, db, r.AccountID, EventStepSent, map[string]any{"sequence_id": r.SequenceID,
					"enrollment_id": r.ID, "subscriber_id": r.SubscriberID, "email": r.Email, "step": e.step,
					"campaign_id": campaignID, "job_id": job, "run": r.Run}); err != nil {
					return err
				}
			}
			next()
		case StepWait:
			if e.WaitingFor != nil { // the wait this step started has ended
				next()
				continue
			}
			until := waitUntil(st, now, a.zone(ctx, q, s, r))
			if !until.After(now) {
				next()
				continue
			}
			if err := wait(until, "", "until "+until.UTC().Format(time.RFC3339)); err != nil {
				return err
			}
			return nil
		case StepWaitForEvent:
			if e.WaitingFor == nil {
				timeout, err := ParseDuration(st.Timeout)
				if err != nil {
					return err
				}
				return wait(now.Add(timeout), st.Event, "event "+st.Event)
			}
			action, reason := st.OnTimeout, "timed_out"
			if e.EventSeen {
				action, reason = st.OnEvent, "event_received"
			}
			if action == "exit" {
				return end("exited", reason)
			}
			if err := logLine("passed", &reason, nil); err != nil {
				return err
			}
			next()
		case StepCondition:
			hit, err := a.condition(ctx, q, st.If, r)
			if err != nil {
				return err
			}
			if hit {
				return end("exited", "condition")
			}
			if err := logLine("passed", nil, nil); err != nil {
				return err
			}
			next()
		default:
			return fmt.Errorf("unknown step type %q", st.Type)
		}
	}
	return errors.New("sequence evaluation did not settle")
}

// hasData reports whether an enrollment's data is more than the empty object.
func hasData(raw []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && len(m) > 0
}

// SendData returns what a sequence step's send (by its job id) shows its
// templates as .Event: the enrollment's data when the send was queued; nil when it
// had none. The executor calls it (Config.SequenceData) for steps whose templates
// use .Event.
func SendData(pool *pgxpool.Pool) func(ctx context.Context, accountID int64, jobID string) ([]byte, error) {
	q := store.New(pool)
	return func(ctx context.Context, accountID int64, jobID string) ([]byte, error) {
		data, err := q.SequenceSendData(ctx, store.SequenceSendDataParams{AccountID: accountID, JobID: jobID})
		if postgres.NoRows(err) {
			return nil, nil
		}
		return data, err
	}
}

// excluded says why the subscriber may not be sent a step now ("" when they may),
// locking the subscriber and the membership rows FOR SHARE until the step
// commits. The step's send row is checked again when it is claimed.
func (a *Advancer) excluded(ctx context.Context, q *store.Queries, s *loaded, r store.SequenceClaimDueRow) (string, error) {
	sub, err := q.SequenceSubscriberLock(ctx, store.SequenceSubscriberLockParams{AccountID: r.AccountID, ID: r.SubscriberID})
	if postgres.NoRows(err) {
		return "subscriber_deleted", nil
	}
	if err != nil {
		return "", err
	}
	if sub.Status != "confirmed" {
		return "not_confirmed", nil
	}
	if sub.Suppressed {
		return "suppressed", nil
	}
	if s.row.ListID != nil {
		st, err := q.SequenceMembershipLock(ctx, store.SequenceMembershipLockParams{AccountID: r.AccountID,
			ListID: *s.row.ListID, SubscriberID: r.SubscriberID})
		if postgres.NoRows(err) || (err == nil && st != "subscribed") {
			return "left_list", nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", nil
}

func (a *Advancer) condition(ctx context.Context, q *store.Queries, c *Condition, r store.SequenceClaimDueRow) (bool, error) {
	switch {
	case c == nil:
		return false, nil
	case c.InSegment != nil:
		return q.SequenceInSegment(ctx, store.SequenceInSegmentParams{SegmentID: *c.InSegment, AccountID: r.AccountID,
			SubscriberID: r.SubscriberID})
	case c.LeftList != nil:
		left, err := q.SequenceLeftList(ctx, store.SequenceLeftListParams{AccountID: r.AccountID, ListID: *c.LeftList,
			SubscriberID: r.SubscriberID})
		return left != nil && *left, err
	case c.Data != "":
		return q.SequenceDataMatch(ctx, store.SequenceDataMatchParams{Data: r.Data, Match: c.Data})
	case c.Clicked != nil:
		return q.SequenceClicked(ctx, store.SequenceClickedParams{AccountID: r.AccountID,
			JobID: RunJobID(r.SequenceID, c.Clicked.Step, r.SubscriberID, int(r.Run))})
	}
	return false, nil
}

// zone is the subscriber's time zone (attributes.timezone, when a valid IANA
// name) or the sequence's.
func (a *Advancer) zone(ctx context.Context, q *store.Queries, s *loaded, r store.SequenceClaimDueRow) *time.Location {
	raw, err := q.SequenceSubscriberAttributes(ctx, store.SequenceSubscriberAttributesParams{AccountID: r.AccountID, ID: r.SubscriberID})
	if err != nil {
		return s.loc
	}
	var attrs struct {
		TimeZone string `json:"timezone"`
	}
	if json.Unmarshal(raw, &attrs) == nil && attrs.TimeZone != "" && attrs.TimeZone != "Local" {
		if loc, err := time.LoadLocation(attrs.TimeZone); err == nil {
			return loc
		}
	}
	return s.loc
}

// waitUntil is when a wait step that starts at now ends: after its duration, then
// at the next `at` time of day on an allowed weekday, in loc.
func waitUntil(st Step, now time.Time, loc *time.Location) time.Time {
	t := now
	if st.Duration != "" {
		d, _ := ParseDuration(st.Duration) // checked when saved
		t = t.Add(d)
	}
	if st.At == "" && len(st.Weekdays) == 0 {
		return t
	}
	allowed := func(d time.Weekday) bool {
		if len(st.Weekdays) == 0 {
			return true
		}
		for _, w := range st.Weekdays {
			if sendwindow.Weekdays[w] == d {
				return true
			}
		}
		return false
	}
	local := t.In(loc)
	h, m := local.Hour(), local.Minute()
	if st.At != "" {
		h, m, _ = parseClock(st.At)
	}
	for i := 0; i <= 8; i++ {
		day := local.AddDate(0, 0, i)
		c := time.Date(day.Year(), day.Month(), day.Day(), h, m, 0, 0, loc)
		if st.At == "" && i > 0 {
			c = time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
		}
		if !c.Before(local) && allowed(c.Weekday()) {
			return c
		}
	}
	return t
}

// sweepDates enrolls the subscribers of each date-triggered sequence whose moment
// (their date plus the offset, at the time of day) is from the activation to a day
// ahead; the enrollment is due at that moment.
func (a *Advancer) sweepDates(ctx context.Context) error {
	now := a.now()
	seqs, err := store.New(a.Pool).SequenceDateSweepList(ctx, &now)
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range seqs {
		since := now
		if s.ActivatedAt != nil {
			since = *s.ActivatedAt
		}
		err := postgres.InTx(ctx, a.Pool, func(tx pgx.Tx) error {
			q := store.New(tx)
			if _, err := q.SequenceSweepDate(ctx, store.SequenceSweepDateParams{AccountID: s.AccountID, SequenceID: s.ID,
				Now: &now, Tz: s.TimeZone, Path: `$."` + *s.DateAttribute + `".datetime("YYYY-MM-DD")`,
				OffsetDays: s.DateOffsetDays, At: s.DateAt, ListID: s.ListID, Since: since,
				Until: now.Add(24 * time.Hour)}); err != nil {
				return err
			}
			return q.SequenceSwept(ctx, store.SequenceSweptParams{ID: s.ID, SweptAt: &now})
		})
		if err != nil {
			// This sequence alone fails: the others are swept, and it is tried again
			// in a minute (its window starts at the activation, so nothing is missed).
			errs = append(errs, fmt.Errorf("date sweep of sequence %d: %w", s.ID, err))
			if err := store.New(a.Pool).SequenceSwept(ctx, store.SequenceSweptParams{ID: s.ID, SweptAt: &now}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
