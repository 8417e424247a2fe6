package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/sequence"
)

// The steps travel in the same JSON shape on the wire and in the database, so
// they convert through JSON rather than field by field.
func convert[T any](from any) T {
	var out T
	b, _ := json.Marshal(from) // plain structs of strings, numbers and slices
	_ = json.Unmarshal(b, &out)
	return out
}

func toAPISequence(q sequence.Sequence) api.Sequence {
	out := api.Sequence{Id: q.ID, Name: q.Name, Status: api.SequenceStatus(q.Status), TimeZone: q.TimeZone,
		ActivatedAt: q.ActivatedAt, CreatedAt: q.CreatedAt, UpdatedAt: q.UpdatedAt,
		Trigger: api.SequenceTrigger{Type: api.SequenceTriggerType(q.Trigger.Type), ListId: q.Trigger.ListID,
			SegmentId: q.Trigger.SegmentID},
		Steps: convert[[]api.SequenceStep](q.Steps), SendWindow: toAPISendWindow(q.SendWindow)}
	if q.Trigger.Event != "" {
		out.Trigger.Event = &q.Trigger.Event
	}
	if q.Trigger.Type == sequence.TriggerDate {
		out.Trigger.Attribute, out.Trigger.OffsetDays, out.Trigger.At = &q.Trigger.Attribute, &q.Trigger.OffsetDays, &q.Trigger.At
	}
	if q.LateAfterText != "" {
		out.LateAfter = &q.LateAfterText
	}
	reentry := api.SequenceReentry(q.Reentry)
	out.Reentry = &reentry
	if q.ReentryAfterText != "" {
		out.ReentryAfter = &q.ReentryAfterText
	}
	return out
}

func sequenceDefinition(in api.SequenceInput) sequence.Definition {
	d := sequence.Definition{Name: in.Name, Trigger: sequence.Trigger{Type: string(in.Trigger.Type), ListID: in.Trigger.ListId,
		SegmentID: in.Trigger.SegmentId},
		Steps: convert[[]sequence.Step](in.Steps), SendWindow: fromAPISendWindow(in.SendWindow)}
	if in.Trigger.Event != nil {
		d.Trigger.Event = *in.Trigger.Event
	}
	if in.Trigger.Attribute != nil {
		d.Trigger.Attribute = *in.Trigger.Attribute
	}
	if in.Trigger.OffsetDays != nil {
		d.Trigger.OffsetDays = *in.Trigger.OffsetDays
	}
	if in.Trigger.At != nil {
		d.Trigger.At = *in.Trigger.At
	}
	if in.TimeZone != nil {
		d.TimeZone = *in.TimeZone
	}
	if in.LateAfter != nil {
		d.LateAfterText = *in.LateAfter
	}
	if in.Reentry != nil {
		d.Reentry = string(*in.Reentry)
	}
	if in.ReentryAfter != nil {
		d.ReentryAfterText = *in.ReentryAfter
	}
	return d
}

func (s *Server) listSequences(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "sequences")
	if err != nil {
		return err
	}
	rows, err := s.Sequences.List(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "sequences", p, rows, func(x sequence.Sequence) cursor { return cursor{ID: x.ID} })
	out := api.SequencePage{Data: make([]api.Sequence, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPISequence(x)
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) createSequence(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SequenceInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	q, err := s.Sequences.Create(r.Context(), accountID(r), sequenceDefinition(in))
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPISequence(q))
}

func (s *Server) getSequence(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	q, err := s.Sequences.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISequence(q))
}

func (s *Server) updateSequence(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.SequenceInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	q, err := s.Sequences.Update(r.Context(), accountID(r), id, sequenceDefinition(in))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISequence(q))
}

func (s *Server) deleteSequence(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Sequences.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sequenceTransition answers POST /v1/sequences/{id}/<name>.
func (s *Server) sequenceTransition(name string) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		q, err := s.Sequences.Transition(r.Context(), accountID(r), id, name)
		if err != nil {
			return err
		}
		return encode(w, http.StatusOK, toAPISequence(q))
	}
}

func (s *Server) enrollSequence(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.SequenceEnrollInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	var subID int64
	if in.SubscriberId != nil {
		subID = *in.SubscriberId
	}
	var email string
	if in.Email != nil {
		email = *in.Email
	}
	var data map[string]any
	if in.Data != nil {
		data = *in.Data
	}
	eid, enrolled, err := s.Sequences.Enroll(r.Context(), accountID(r), id, subID, email, data)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.SequenceEnrollResult{Enrolled: enrolled, EnrollmentId: eid})
}

func (s *Server) listSequenceEnrollments(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := parsePage(r, "sequence-enrollments")
	if err != nil {
		return err
	}
	rows, err := s.Sequences.Enrollments(r.Context(), accountID(r), id, r.URL.Query().Get("email"), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "sequence-enrollments", p, rows, func(x sequence.Enrollment) cursor { return cursor{ID: x.ID} })
	out := api.SequenceEnrollmentPage{Data: make([]api.SequenceEnrollment, len(rows)), NextCursor: next}
	for i, x := range rows {
		e := api.SequenceEnrollment{Id: x.ID, SubscriberId: x.SubscriberID, Email: x.Email,
			State: api.SequenceEnrollmentState(x.State), Step: x.Step, DueAt: x.DueAt, ExitReason: x.ExitReason,
			CreatedAt: x.CreatedAt, FinishedAt: x.FinishedAt, Run: &x.Run, Timeline: make([]api.SequenceTimelineEntry, len(x.Timeline))}
		if x.WaitingFor != nil && *x.WaitingFor != "" {
			e.WaitingFor = x.WaitingFor
		}
		for j, l := range x.Timeline {
			e.Timeline[j] = api.SequenceTimelineEntry{Step: l.Step, Outcome: api.SequenceTimelineEntryOutcome(l.Outcome),
				Reason: l.Reason, JobId: l.JobID, SendStatus: l.SendStatus, At: l.At, Run: &l.Run}
		}
		out.Data[i] = e
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) sequenceStats(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	st, err := s.Sequences.Stats(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	out := api.SequenceStats{Enrollments: st.Enrollments, Steps: make([]api.SequenceStepStats, len(st.Steps))}
	for i, x := range st.Steps {
		out.Steps[i] = api.SequenceStepStats{Step: x.Step, Type: x.Type, Outcomes: x.Outcomes, Sends: x.Sends}
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) trackEvent(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.TrackInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	var data map[string]any
	if in.Data != nil {
		data = *in.Data
	}
	res, err := s.Sequences.Track(r.Context(), accountID(r), in.EventId, in.Name, in.Email, data)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, api.TrackResult{EventId: res.EventID, Replayed: res.Replayed,
		Enrolled: res.Enrolled, Woke: res.Woke})
}
