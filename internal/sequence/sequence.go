// Package sequence is automation: a trigger enrolls a subscriber in a sequence of
// steps (send a template, wait, test a condition, wait for an event), and the
// advancer moves every enrollment along when it falls due. Each send step is a
// campaign of kind 'sequence' whose send rows the executor claims like any
// campaign's (migration 00290), so a step is sent at most once per enrollment
// (its job id), through the same lease, acknowledgement, rescue and exclusions.
package sequence

import (
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/sendwindow"
	"github.com/sendonce/sendonce/internal/store"
)

// Step types.
const (
	StepSend         = "send"
	StepWait         = "wait"
	StepCondition    = "condition"
	StepWaitForEvent = "wait_for_event"
)

// Trigger types.
const (
	TriggerManual     = "manual"
	TriggerListJoined = "list_joined"
	TriggerConfirmed  = "confirmed"
	TriggerEvent      = "event"
	// TriggerDate enrolls each subscriber once at attributes.<Attribute> (YYYY-MM-DD)
	// plus OffsetDays, at At (HH:MM) in the sequence's time zone.
	TriggerDate = "date_attribute"
	// TriggerSegment enrolls each confirmed subscriber once when they match SegmentID:
	// at once when a subscriber write makes them match, else by the segment sweep.
	TriggerSegment = "segment_entered"
)

// Statuses of a sequence.
const (
	StatusDraft    = "draft"
	StatusActive   = "active"
	StatusPaused   = "paused"
	StatusArchived = "archived"
)

// Re-entry policies: whether an enrollment that ended may run again.
const (
	ReentryNever     = "never"
	ReentryAfterExit = "after_exit"
)

// MaxEventDataBytes bounds the data of a tracked event and of an enrollment alike
// (as JSON, eventData): it is what a step's templates see as .Event, with the data
// of the events the enrollment awaited merged in, and templates read at most
// render.MaxAttributeBytes of it (a step whose merged data is larger fails to
// render, as one with larger attributes).
const MaxEventDataBytes = 16 << 10

// MaxSteps bounds a sequence's steps.
const MaxSteps = 50

// maxWait bounds a wait's duration and a wait_for_event's timeout.
const maxWait = 366 * 24 * time.Hour

// Step is one step of a sequence, stored as JSON on the sequence.
type Step struct {
	Type       string     `json:"type"`
	TemplateID int64      `json:"template_id,omitempty"`
	SenderID   *int64     `json:"sender_id,omitempty"`
	PoolID     *int64     `json:"pool_id,omitempty"`
	FromEmail  string     `json:"from_email,omitempty"`
	FromName   string     `json:"from_name,omitempty"`
	ReplyTo    string     `json:"reply_to,omitempty"`
	Duration   string     `json:"duration,omitempty"`
	At         string     `json:"at,omitempty"`
	Weekdays   []string   `json:"weekdays,omitempty"`
	If         *Condition `json:"if,omitempty"`
	Event      string     `json:"event,omitempty"`
	Timeout    string     `json:"timeout,omitempty"`
	OnEvent    string     `json:"on_event,omitempty"`
	OnTimeout  string     `json:"on_timeout,omitempty"`
}

// Condition is a condition step's test; exactly one field is set. True ends the
// enrollment ("skip the rest").
type Condition struct {
	InSegment *int64            `json:"in_segment,omitempty"`
	LeftList  *int64            `json:"left_list,omitempty"`
	Data      string            `json:"data,omitempty"`
	Clicked   *ClickedCondition `json:"clicked,omitempty"`
}

// ClickedCondition is true when the subscriber clicked a link (a human click: not
// a suspected bot, not the hidden honeypot link) in the send of step Step, an
// earlier send step, in the enrollment's current run.
type ClickedCondition struct {
	Step int `json:"step"`
}

// Trigger says what enrolls subscribers.
type Trigger struct {
	Type   string
	ListID *int64
	Event  string
	// SegmentID is what a segment_entered trigger watches.
	SegmentID *int64
	// Attribute, OffsetDays and At describe a date_attribute trigger.
	Attribute  string
	OffsetDays int
	At         string
}

// Definition is what a tenant writes: everything but identity and state.
type Definition struct {
	Name     string
	Trigger  Trigger
	TimeZone string
	// LateAfter: a send step reached later than this after it fell due is skipped
	// (0: never too late).
	LateAfter time.Duration
	// LateAfterText is LateAfter as the tenant wrote it (empty: none).
	LateAfterText string
	// Reentry is ReentryNever (default) or ReentryAfterExit: a new trigger may start
	// an ended enrollment again (not one that ended by an opt-out), no sooner than
	// ReentryAfter after it ended (ReentryAfterText as written).
	Reentry          string
	ReentryAfter     time.Duration
	ReentryAfterText string
	Steps            []Step
	// SendWindow is when its step campaigns may send (read in TimeZone unless it
	// names its own zone); nil: at any time (docs/executor.md, Sending windows).
	SendWindow *sendwindow.Window
}

// Sequence is a stored sequence.
type Sequence struct {
	ID int64
	Definition
	Status      string
	ActivatedAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Service manages the accounts' sequences, enrollments and tracked events.
type Service struct {
	pool *pgxpool.Pool
	// Now is the clock; nil means time.Now. Tests move it instead of sleeping.
	Now func() time.Time
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return &Service{pool: pool} }

func nowPtr(f func() time.Time) *time.Time {
	if f == nil {
		return nil
	}
	t := f()
	return &t
}

func fromRow(r store.Sequence) Sequence {
	q := Sequence{ID: r.ID, Status: r.Status, ActivatedAt: r.ActivatedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	q.Name = r.Name
	q.Trigger = Trigger{Type: r.TriggerType, ListID: r.ListID, SegmentID: r.SegmentID}
	if r.EventName != nil {
		q.Trigger.Event = *r.EventName
	}
	if r.DateAttribute != nil {
		q.Trigger.Attribute, q.Trigger.OffsetDays, q.Trigger.At = *r.DateAttribute, int(r.DateOffsetDays), r.DateAt
	}
	q.TimeZone = r.TimeZone
	q.SendWindow, _ = sendwindow.Parse(r.SendWindow) // written by check: it parses
	q.Reentry = r.Reentry
	if r.ReentryAfter.Valid {
		q.ReentryAfter = time.Duration(r.ReentryAfter.Microseconds)*time.Microsecond +
			time.Duration(r.ReentryAfter.Days)*24*time.Hour
		q.ReentryAfterText = q.ReentryAfter.String()
	}
	if r.LateAfter.Valid {
		q.LateAfter = time.Duration(r.LateAfter.Microseconds)*time.Microsecond +
			time.Duration(r.LateAfter.Days)*24*time.Hour
		q.LateAfterText = q.LateAfter.String()
	}
	_ = json.Unmarshal(r.Steps, &q.Steps) // written by Create/Update from checked steps
	return q
}
