package sequence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

func reentryParam(d Definition) string {
	if d.Reentry == "" {
		return ReentryNever
	}
	return d.Reentry
}

func reentryAfterParam(d Definition) pgtype.Interval {
	if d.ReentryAfter <= 0 {
		return pgtype.Interval{}
	}
	return pgtype.Interval{Microseconds: d.ReentryAfter.Microseconds(), Valid: true}
}

func lateParam(d Definition) pgtype.Interval {
	if d.LateAfter <= 0 {
		return pgtype.Interval{}
	}
	return pgtype.Interval{Microseconds: d.LateAfter.Microseconds(), Valid: true}
}

func attributeParam(d Definition) *string {
	if d.Trigger.Type != TriggerDate {
		return nil
	}
	return &d.Trigger.Attribute
}

func atParam(d Definition) string {
	if d.Trigger.At == "" {
		return "09:00"
	}
	return d.Trigger.At
}

func eventParam(d Definition) *string {
	if d.Trigger.Event == "" {
		return nil
	}
	return &d.Trigger.Event
}

// windowParam is d's sending window as stored (nil: none).
func windowParam(d Definition) []byte {
	if d.SendWindow == nil {
		return nil
	}
	b, _ := json.Marshal(d.SendWindow) // strings only
	return b
}

// Create saves a draft sequence.
func (s *Service) Create(ctx context.Context, accountID int64, d Definition) (Sequence, error) {
	if err := s.check(ctx, accountID, &d); err != nil {
		return Sequence{}, err
	}
	steps, err := json.Marshal(d.Steps)
	if err != nil {
		return Sequence{}, err
	}
	r, err := store.New(s.pool).SequenceCreate(ctx, store.SequenceCreateParams{AccountID: accountID, Name: d.Name,
		TriggerType: d.Trigger.Type, ListID: d.Trigger.ListID, EventName: eventParam(d), TimeZone: d.TimeZone,
		LateAfter: lateParam(d), Steps: steps, DateAttribute: attributeParam(d), DateOffsetDays: int32(d.Trigger.OffsetDays),
		DateAt: atParam(d), SegmentID: d.Trigger.SegmentID, Reentry: reentryParam(d), ReentryAfter: reentryAfterParam(d),
		SendWindow: windowParam(d)})
	if err != nil {
		return Sequence{}, postgres.Error(err, "sequence")
	}
	return fromRow(r), nil
}

// Get returns one sequence.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Sequence, error) {
	r, err := store.New(s.pool).SequenceGet(ctx, store.SequenceGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Sequence{}, postgres.Error(err, "sequence")
	}
	return fromRow(r), nil
}

// List returns up to limit sequences after afterID in id order.
func (s *Service) List(ctx context.Context, accountID, afterID int64, limit int) ([]Sequence, error) {
	rows, err := store.New(s.pool).SequenceList(ctx, store.SequenceListParams{AccountID: accountID, AfterID: afterID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Sequence, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, nil
}

// Update replaces a sequence's definition. On an active or paused sequence the
// step campaigns are brought up to date in the same transaction: enrollments at
// steps they have not reached see the new steps; none is sent a step twice (a
// step's job id is its position, and an enrollment only moves forward).
func (s *Service) Update(ctx context.Context, accountID, id int64, d Definition) (Sequence, error) {
	if err := s.check(ctx, accountID, &d); err != nil {
		return Sequence{}, err
	}
	steps, err := json.Marshal(d.Steps)
	if err != nil {
		return Sequence{}, err
	}
	var out Sequence
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		r, err := q.SequenceUpdate(ctx, store.SequenceUpdateParams{AccountID: accountID, ID: id, Name: d.Name,
			TriggerType: d.Trigger.Type, ListID: d.Trigger.ListID, EventName: eventParam(d), TimeZone: d.TimeZone,
			LateAfter: lateParam(d), Steps: steps, Now: nowPtr(s.Now), DateAttribute: attributeParam(d),
			DateOffsetDays: int32(d.Trigger.OffsetDays), DateAt: atParam(d), SegmentID: d.Trigger.SegmentID,
			Reentry: reentryParam(d), ReentryAfter: reentryAfterParam(d), SendWindow: windowParam(d)})
		if postgres.NoRows(err) {
			return s.stateError(ctx, q, accountID, id)
		}
		if err != nil {
			return err
		}
		out = fromRow(r)
		if out.Status == StatusActive || out.Status == StatusPaused {
			return upsertStepCampaigns(ctx, q, accountID, out, campaignStatus(out.Status))
		}
		return nil
	})
	return out, err
}

// Delete removes a draft; a sequence that ran is archived instead (409).
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	q := store.New(s.pool)
	n, err := q.SequenceDelete(ctx, store.SequenceDeleteParams{AccountID: accountID, ID: id})
	if err != nil {
		return err
	}
	if n == 0 {
		return s.stateError(ctx, q, accountID, id)
	}
	return nil
}

// stateError is the answer to a compare-and-set that changed nothing: 404 when
// the sequence is not the account's, else 409 with its current status.
func (s *Service) stateError(ctx context.Context, q *store.Queries, accountID, id int64) error {
	r, err := q.SequenceGet(ctx, store.SequenceGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return postgres.Error(err, "sequence")
	}
	return &apperr.Error{Code: apperr.Conflict, Message: "sequence is " + r.Status,
		Extra: map[string]any{"current_status": r.Status}}
}

func campaignStatus(sequenceStatus string) string {
	if sequenceStatus == StatusActive {
		return "sending"
	}
	return "paused"
}

// upsertStepCampaigns makes or updates the campaign of every send step.
func upsertStepCampaigns(ctx context.Context, q *store.Queries, accountID int64, seq Sequence, status string) error {
	// Every run that has step campaigns is brought up to date (run 1 is made at the
	// first activation); the lock keeps an advancer from making a new run's
	// campaigns from the old steps meanwhile.
	if err := q.SequenceRunLock(ctx, int32(seq.ID)); err != nil {
		return err
	}
	runs, err := q.SequenceRuns(ctx, store.SequenceRunsParams{AccountID: accountID, SequenceID: seq.ID})
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		runs = []int32{1}
	}
	for _, run := range runs {
		if err := upsertRunCampaigns(ctx, q, accountID, seq, status, run); err != nil {
			return err
		}
	}
	return nil
}

// upsertRunCampaigns makes or updates the campaigns that carry the send steps of
// one run (run r > 1: the sends of the enrollments' r-th run, whose rows cannot
// share a campaign with their earlier runs' rows: one row per campaign and
// subscriber).
func upsertRunCampaigns(ctx context.Context, q *store.Queries, accountID int64, seq Sequence, status string, run int32) error {
	var lists []int64
	if seq.Trigger.ListID != nil {
		lists = []int64{*seq.Trigger.ListID}
	}
	for i, st := range seq.Steps {
		if st.Type != StepSend {
			continue
		}
		campaignID, err := q.SequenceStepCampaignUpsert(ctx, store.SequenceStepCampaignUpsertParams{AccountID: accountID,
			TemplateID: st.TemplateID, SequenceID: seq.ID, Position: int32(i), FromEmail: st.FromEmail,
			FromName: st.FromName, ReplyTo: st.ReplyTo, ListIds: append([]int64{}, lists...), SenderID: st.SenderID,
			PoolID: st.PoolID,
			Status: status, Run: run})
		if postgres.NoRows(err) { // the template was deleted since the sequence was saved
			return apperr.Invalidf(fmt.Sprintf("/steps/%d/template_id", i), "no such template")
		}
		if err != nil {
			return err
		}
		if err := storeStepLinks(ctx, q, accountID, campaignID); err != nil {
			return err
		}
	}
	return nil
}

// storeStepLinks stores the links click tracking rewrites in a step campaign (as
// a campaign's approval does; the redirect answers with these URLs), so a step's
// tracked links work and its clicks are recorded. An edit that keeps the links
// changes nothing; one that changes links already stored turns the step's click
// tracking off instead of renumbering them: the messages already sent keep
// redirecting where they were sent to, and the step's later sends carry their
// links as written.
func storeStepLinks(ctx context.Context, q *store.Queries, accountID, campaignID int64) error {
	c, err := q.SequenceStepCampaignClicks(ctx, store.SequenceStepCampaignClicksParams{AccountID: accountID, CampaignID: campaignID})
	if err != nil || !c.TrackClicks {
		return err
	}
	urls := render.TrackableLinks(c.HtmlTemplate)
	switch {
	case len(c.Urls) == 0 && len(urls) == 0, slices.Equal(c.Urls, urls):
		return nil
	case len(c.Urls) == 0:
		return q.TrackedLinksInsert(ctx, store.TrackedLinksInsertParams{AccountID: accountID, CampaignID: campaignID, Urls: urls})
	default:
		return q.SequenceStepCampaignUntrack(ctx, store.SequenceStepCampaignUntrackParams{AccountID: accountID, CampaignID: campaignID})
	}
}

// Transition names for Transition.
const (
	Activate = "activate"
	Pause    = "pause"
	Resume   = "resume"
	Archive  = "archive"
)

var transitions = map[string]struct {
	from []string
	to   string
}{
	Activate: {[]string{StatusDraft}, StatusActive},
	Pause:    {[]string{StatusActive}, StatusPaused},
	Resume:   {[]string{StatusPaused}, StatusActive},
	Archive:  {[]string{StatusDraft, StatusActive, StatusPaused}, StatusArchived},
}

// Transition moves a sequence from one state to another with a compare-and-set;
// its step campaigns follow in the same transaction (sending, paused, cancelled),
// so a paused sequence's queued sends are not claimed. An archive's running
// enrollments end after that transaction commits, in bounded batches
// (ExitArchived): every account's event readers wait below the oldest running
// transaction, so the transition's own stays short however many there are.
func (s *Service) Transition(ctx context.Context, accountID, id int64, name string) (Sequence, error) {
	t, ok := transitions[name]
	if !ok {
		return Sequence{}, apperr.New(apperr.Invalid, "unknown transition %q", name)
	}
	var out Sequence
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		// Waits for the advancer's batches of this sequence (SequenceAdvanceLock).
		if err := q.SequenceTransitionLock(ctx, int32(id)); err != nil {
			return err
		}
		r, err := q.SequenceTransition(ctx, store.SequenceTransitionParams{AccountID: accountID, ID: id,
			To: t.to, From: t.from, Now: nowPtr(s.Now)})
		if postgres.NoRows(err) {
			return s.stateError(ctx, q, accountID, id)
		}
		if err != nil {
			return err
		}
		out = fromRow(r)
		switch name {
		case Activate:
			return upsertStepCampaigns(ctx, q, accountID, out, "sending")
		case Pause, Resume:
			if _, err := q.SequenceCampaignsSetStatus(ctx, store.SequenceCampaignsSetStatusParams{AccountID: accountID,
				SequenceID: id, Status: campaignStatus(out.Status)}); err != nil {
				return err
			}
			if name == Resume {
				return q.CampaignNotify(ctx, store.CampaignNotifyParams{Channel: postgres.CampaignChannel, Payload: "resume"})
			}
		case Archive:
			_, err := q.SequenceCampaignsSetStatus(ctx, store.SequenceCampaignsSetStatusParams{AccountID: accountID,
				SequenceID: id, Status: "cancelled"})
			return err
		}
		return nil
	})
	if err == nil && name == Archive {
		// The archive has committed: from now on no enrollment of it is advanced,
		// and what this request does not end (it was cut short, or a batch failed)
		// the executors' maintenance does, so a failure here does not fail it.
		_, _ = ExitArchived(ctx, store.New(s.pool), accountID, id, nowPtr(s.Now))
	}
	return out, err
}

// ExitArchived ends the running enrollments of an archived sequence, one bounded
// batch per statement (each committing on its own), until none is left, and
// returns how many it ended. now is the caller's clock (nil: the database's).
func ExitArchived(ctx context.Context, q *store.Queries, accountID, sequenceID int64, now *time.Time) (int64, error) {
	var total int64
	for {
		n, err := q.SequenceExitArchived(ctx, store.SequenceExitArchivedParams{AccountID: accountID, SequenceID: sequenceID, Now: now})
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// ExitArchivedLeftovers ends, for every archived sequence that still has running
// enrollments (its archive was cut short, or one joined as it committed), those
// enrollments as the archive does, and returns how many it ended. The executors'
// maintenance runs it.
func ExitArchivedLeftovers(ctx context.Context, q *store.Queries, now *time.Time) (int64, error) {
	seqs, err := q.SequenceListArchivedWithActive(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, s := range seqs {
		n, err := ExitArchived(ctx, q, s.AccountID, s.ID, now)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Enroll enrolls one subscriber (by id, or by email when id is 0) in an active or
// paused sequence. It reports false with the existing enrollment when the
// subscriber was enrolled before: a re-trigger changes nothing (unless the
// sequence allows re-entry and that enrollment ended: then its next run starts).
func (s *Service) Enroll(ctx context.Context, accountID, id, subscriberID int64, email string, data map[string]any) (int64, bool, error) {
	b, err := eventData(data)
	if err != nil {
		return 0, false, err
	}
	q := store.New(s.pool)
	seq, err := q.SequenceGet(ctx, store.SequenceGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return 0, false, postgres.Error(err, "sequence")
	}
	if seq.Status != StatusActive && seq.Status != StatusPaused {
		return 0, false, &apperr.Error{Code: apperr.Conflict, Message: "sequence is " + seq.Status + ": only an active or paused sequence enrolls",
			Extra: map[string]any{"current_status": seq.Status}}
	}
	var sub store.SequenceSubscriberByEmailRow
	if subscriberID != 0 {
		r, err := q.SequenceSubscriberByID(ctx, store.SequenceSubscriberByIDParams{AccountID: accountID, ID: subscriberID})
		if postgres.NoRows(err) {
			return 0, false, apperr.Invalidf("/subscriber_id", "no such subscriber")
		}
		if err != nil {
			return 0, false, err
		}
		sub = store.SequenceSubscriberByEmailRow(r)
	} else {
		email = strings.TrimSpace(email)
		if email == "" {
			return 0, false, apperr.Invalidf("/email", "email or subscriber_id is required")
		}
		sub, err = q.SequenceSubscriberByEmail(ctx, store.SequenceSubscriberByEmailParams{AccountID: accountID, Email: email})
		if postgres.NoRows(err) {
			return 0, false, apperr.Invalidf("/email", "no subscriber with this address")
		}
		if err != nil {
			return 0, false, err
		}
	}
	enrolled, err := q.SequenceEnroll(ctx, store.SequenceEnrollParams{AccountID: accountID, SequenceID: id, SubscriberID: sub.ID,
		Email: sub.Email, Data: b, Trigger: TriggerManual, Now: nowPtr(s.Now)})
	if postgres.NoRows(err) {
		existing, lerr := q.SequenceEnrollmentList(ctx, store.SequenceEnrollmentListParams{AccountID: accountID,
			SequenceID: id, Email: &sub.Email, Lim: 1})
		if lerr != nil || len(existing) == 0 {
			return 0, false, errors.Join(err, lerr)
		}
		return existing[0].ID, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return enrolled.ID, true, nil
}

// eventData is data as stored for an enrollment or a tracked event: JSON of at
// most MaxEventDataBytes, else a 422 naming /data. Both take it from one check, so
// an enrollment cannot carry what /v1/track refuses.
func eventData(data map[string]any) ([]byte, error) {
	b, err := json.Marshal(nonNil(data))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxEventDataBytes {
		return nil, apperr.Invalidf("/data", "data must be at most %d bytes as JSON (it is %d)", MaxEventDataBytes, len(b))
	}
	return b, nil
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// TrackResult is what a tracked event did.
type TrackResult struct {
	EventID  string
	Replayed bool
	Enrolled int
	Woke     int
}

// Track records a custom event about one subscriber, idempotent by eventID: it
// enrolls the subscriber in the active sequences the event triggers and wakes the
// subscriber's enrollments waiting for it, in one transaction. A replay answers
// what the first did and changes nothing.
func (s *Service) Track(ctx context.Context, accountID int64, eventID, name, email string, data map[string]any) (TrackResult, error) {
	eventID, name, email = strings.TrimSpace(eventID), strings.TrimSpace(name), strings.TrimSpace(email)
	for field, v := range map[string]string{"/event_id": eventID, "/name": name, "/email": email} {
		if v == "" {
			return TrackResult{}, apperr.Invalidf(field, "%s is required", field[1:])
		}
		if err := text(field, v, 320); err != nil {
			return TrackResult{}, err
		}
	}
	b, err := eventData(data)
	if err != nil {
		return TrackResult{}, err
	}
	out := TrackResult{EventID: eventID}
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var subID *int64
		sub, err := q.SequenceSubscriberByEmail(ctx, store.SequenceSubscriberByEmailParams{AccountID: accountID, Email: email})
		switch {
		case err == nil:
			subID = &sub.ID
		case !postgres.NoRows(err):
			return err
		}
		if _, err := q.TrackEventInsert(ctx, store.TrackEventInsertParams{AccountID: accountID, EventID: eventID, Name: name,
			Email: email, SubscriberID: subID, Data: b, Now: nowPtr(s.Now)}); postgres.NoRows(err) {
			prev, gerr := q.TrackEventGet(ctx, store.TrackEventGetParams{AccountID: accountID, EventID: eventID})
			if gerr != nil {
				return gerr
			}
			out = TrackResult{EventID: eventID, Replayed: true, Enrolled: int(prev.Enrolled), Woke: int(prev.Woke)}
			return nil
		} else if err != nil {
			return err
		}
		if subID == nil {
			return nil
		}
		ids, err := q.SequenceEventSequences(ctx, store.SequenceEventSequencesParams{AccountID: accountID, EventName: &name})
		if err != nil {
			return err
		}
		for _, id := range ids {
			_, err := q.SequenceEnroll(ctx, store.SequenceEnrollParams{AccountID: accountID, SequenceID: id,
				SubscriberID: sub.ID, Email: sub.Email, Data: b, Trigger: TriggerEvent + ":" + name, Now: nowPtr(s.Now)})
			if postgres.NoRows(err) {
				continue
			}
			if err != nil {
				return err
			}
			out.Enrolled++
		}
		woke, err := q.SequenceWake(ctx, store.SequenceWakeParams{AccountID: accountID, SubscriberID: sub.ID,
			EventName: &name, Data: b, Now: nowPtr(s.Now)})
		if err != nil {
			return err
		}
		out.Woke = int(woke)
		return q.TrackEventCounts(ctx, store.TrackEventCountsParams{AccountID: accountID, EventID: eventID,
			Enrolled: int32(out.Enrolled), Woke: int32(out.Woke)})
	})
	return out, err
}

// Enrollment is one subscriber's run through a sequence, with its timeline.
type Enrollment struct {
	ID           int64
	SubscriberID int64
	Email        string
	State        string
	Step         int
	DueAt        time.Time
	WaitingFor   *string
	ExitReason   *string
	CreatedAt    time.Time
	FinishedAt   *time.Time
	// Run counts the enrollment's runs through the sequence (more than 1 only
	// when the sequence allows re-entry).
	Run      int
	Timeline []TimelineEntry
}

// TimelineEntry is one line of an enrollment's timeline.
type TimelineEntry struct {
	Step       int
	Outcome    string
	Reason     *string
	JobID      *string
	SendStatus *string
	At         time.Time
	// Run is the run of the enrollment the line belongs to.
	Run int
}

// Enrollments lists a sequence's enrollments (one address's when email is set)
// with their timelines.
func (s *Service) Enrollments(ctx context.Context, accountID, id int64, email string, afterID int64, limit int) ([]Enrollment, error) {
	q := store.New(s.pool)
	if _, err := q.SequenceGet(ctx, store.SequenceGetParams{AccountID: accountID, ID: id}); err != nil {
		return nil, postgres.Error(err, "sequence")
	}
	var emailP *string
	if email != "" {
		emailP = &email
	}
	rows, err := q.SequenceEnrollmentList(ctx, store.SequenceEnrollmentListParams{AccountID: accountID, SequenceID: id,
		AfterID: afterID, Email: emailP, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(rows))
	out := make([]Enrollment, len(rows))
	at := map[int64]int{}
	for i, r := range rows {
		ids[i] = r.ID
		at[r.ID] = i
		out[i] = Enrollment{ID: r.ID, SubscriberID: r.SubscriberID, Email: r.Email, State: r.State, Step: int(r.Step),
			DueAt: r.DueAt, WaitingFor: r.WaitingFor, ExitReason: r.ExitReason, CreatedAt: r.CreatedAt,
			FinishedAt: r.FinishedAt, Run: int(r.Run), Timeline: []TimelineEntry{}}
	}
	lines, err := q.SequenceTimeline(ctx, store.SequenceTimelineParams{AccountID: accountID, EnrollmentIds: ids})
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		e := &out[at[l.EnrollmentID]]
		e.Timeline = append(e.Timeline, TimelineEntry{Step: int(l.Step), Outcome: l.Outcome, Reason: l.Reason,
			JobID: l.JobID, SendStatus: l.SendStatus, At: l.At, Run: int(l.Run)})
	}
	return out, nil
}

// StepStats is what happened at one step.
type StepStats struct {
	Step     int
	Type     string
	Outcomes map[string]int64
	Sends    map[string]int64
}

// Stats are a sequence's enrollments by state and its steps' outcomes.
type Stats struct {
	Enrollments map[string]int64
	Steps       []StepStats
}

// Stats counts a sequence's enrollments and step outcomes.
func (s *Service) Stats(ctx context.Context, accountID, id int64) (Stats, error) {
	q := store.New(s.pool)
	r, err := q.SequenceGet(ctx, store.SequenceGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Stats{}, postgres.Error(err, "sequence")
	}
	seq := fromRow(r)
	out := Stats{Enrollments: map[string]int64{}, Steps: make([]StepStats, len(seq.Steps))}
	for i, st := range seq.Steps {
		out.Steps[i] = StepStats{Step: i, Type: st.Type, Outcomes: map[string]int64{}, Sends: map[string]int64{}}
	}
	states, err := q.SequenceStateCounts(ctx, store.SequenceStateCountsParams{AccountID: accountID, SequenceID: id})
	if err != nil {
		return Stats{}, err
	}
	for _, x := range states {
		out.Enrollments[x.State] = x.N
	}
	logs, err := q.SequenceStepStats(ctx, store.SequenceStepStatsParams{AccountID: accountID, SequenceID: id})
	if err != nil {
		return Stats{}, err
	}
	for _, x := range logs {
		if int(x.Step) >= len(out.Steps) {
			continue // a step removed by an edit
		}
		key := x.Outcome
		if x.Reason != "" && x.Outcome != "entered" && x.Outcome != "sent" {
			key += ":" + x.Reason
		}
		out.Steps[x.Step].Outcomes[key] += x.N
	}
	sends, err := q.SequenceSendStats(ctx, store.SequenceSendStatsParams{AccountID: accountID, SequenceID: id})
	if err != nil {
		return Stats{}, err
	}
	for _, x := range sends {
		if int(x.Step) < len(out.Steps) {
			out.Steps[x.Step].Sends[x.Status] = x.N
		}
	}
	return out, nil
}
