// Package event is the tenants' view of what happened: every state change worth
// reporting writes an events row in its own transaction (an outbox), and the
// package serves those rows three ways: signed Standard Webhooks deliveries to the
// account's endpoints (at least once, retried with backoff, claimed by any replica),
// a pull API and a Server-Sent Events stream. Per-recipient events are written by
// the executor's acknowledging statements themselves (db/queries/sends.sql), so
// they cost no round trip of their own.
package event

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/store"
)

// The event types. The send.* types are written in SQL (sends.sql, executor.sql);
// keep the two lists in step.
const (
	CampaignApproved  = "campaign.approved"
	CampaignStarted   = "campaign.started"
	CampaignPaused    = "campaign.paused"
	CampaignResumed   = "campaign.resumed"
	CampaignCancelled = "campaign.cancelled"
	CampaignSent      = "campaign.sent"
	// CampaignFailed: the executor could not start the campaign (written in SQL,
	// campaigns.sql CampaignFail); data carries the reason.
	CampaignFailed = "campaign.failed"
	// CampaignWinnerChosen: an A/B test's winner was chosen, by its metric or by a
	// person (written in SQL, abtests.sql CampaignWinnerSet); data names the
	// variant and who chose it.
	CampaignWinnerChosen = "campaign.winner_chosen"

	SendSent       = "send.sent"
	SendFailed     = "send.failed"
	SendUnknown    = "send.unknown"
	SendSuppressed = "send.suppressed"
	// SendClicked and SendOpened: a tracked link or the open pixel was hit
	// (written with the hit by the tracker's batched insert, tracking.sql).
	SendClicked = "send.clicked"
	SendOpened  = "send.opened"

	SubscriberUnsubscribed = "subscriber.unsubscribed"
	SubscriberBounced      = "subscriber.bounced"
	SubscriberComplained   = "subscriber.complained"
	// SubscriberCreated: the public sign-up form made a new (pending) subscriber.
	SubscriberCreated = "subscriber.created"
	// SubscriberConfirmed: an address confirmed its double opt-in sign-up.
	SubscriberConfirmed = "subscriber.confirmed"
	// SubscriberSubscribed: an address joined or rejoined lists itself (a single
	// opt-in sign-up, or the preference page).
	SubscriberSubscribed = "subscriber.subscribed"
	// SubscriberErased: a person was erased (the API or the preference page);
	// data carries the erasure and subscriber ids, never the address.
	SubscriberErased = "subscriber.erased"

	SuppressionCreated = "suppression.created"
	SuppressionDeleted = "suppression.deleted"

	EndpointDisabled = "endpoint.disabled"
	// SenderComplaintRateExceeded: a sender's (or the environment provider's)
	// complaint rate crossed SENDONCE_COMPLAINT_RATE_MAX; its campaigns pause.
	SenderComplaintRateExceeded = "sender.complaint_rate_exceeded"

	// SequenceStepSent: a sequence step's send was queued (its job id in data);
	// the send's own outcome follows as send.* of the step's campaign.
	SequenceStepSent = "sequence.step_sent"
	// SequenceExited: an enrollment ended (reason completed, condition, left_list,
	// suppressed, not_confirmed, timed_out, event_received, archived…).
	SequenceExited = "sequence.exited"
	// EndpointPing is the test event of POST /v1/event-endpoints/{id}/ping; it goes
	// to that endpoint only (an endpoint may still name it in event_types, as every
	// type of the catalogue).
	EndpointPing = "endpoint.ping"
)

// Types is the catalogue: what an endpoint may subscribe to and a ?type= filter may
// name. openapi.yaml's EventType enum lists the same (a test holds them equal).
var Types = []string{
	CampaignApproved, CampaignStarted, CampaignPaused, CampaignResumed, CampaignCancelled, CampaignSent, CampaignFailed,
	CampaignWinnerChosen,
	SendSent, SendFailed, SendUnknown, SendSuppressed, SendClicked, SendOpened,
	SubscriberUnsubscribed, SubscriberBounced, SubscriberComplained,
	SubscriberCreated, SubscriberConfirmed, SubscriberSubscribed, SubscriberErased,
	SuppressionCreated, SuppressionDeleted, EndpointDisabled, SenderComplaintRateExceeded,
	SequenceStepSent, SequenceExited, EndpointPing,
}

// ValidType reports whether t is in the catalogue.
func ValidType(t string) bool {
	for _, k := range Types {
		if k == t {
			return true
		}
	}
	return false
}

// perRecipient reports whether events of type t may be batched.
func perRecipient(t string) bool { return strings.HasPrefix(t, "send.") }

// Event is one event as tenants see it: in webhook bodies, the pull API and the stream.
// Its JSON names are the signed body of every delivery and each SSE data line, so
// they stay here; the pull API answers api.Event built from it.
type Event struct {
	// ID is "evt_" and the row id; the webhook-id of a single-event delivery.
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	// Position is the reading-order position (xid, id), for cursors; not serialised.
	Position Position `json:"-"`
}

// Position is a place in the reading order of an account's events.
type Position struct {
	Xid int64
	ID  int64
}

// Before reports whether p comes before q in the reading order.
func (p Position) Before(q Position) bool {
	return p.Xid < q.Xid || (p.Xid == q.Xid && p.ID < q.ID)
}

// EventID formats a row id as a public event id.
func EventID(id int64) string { return "evt_" + strconv.FormatInt(id, 10) }

// ParseEventID reads a public event id ("evt_123").
func ParseEventID(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "evt_"), 10, 64)
	return n, err == nil && n > 0 && strings.HasPrefix(s, "evt_")
}

// Emit records one event using db, which must be the transaction of the change the
// event reports: a rollback then takes the event with it.
func Emit(ctx context.Context, db store.DBTX, accountID int64, typ string, data any) error {
	_, err := emit(ctx, db, accountID, typ, data)
	return err
}

func emit(ctx context.Context, db store.DBTX, accountID int64, typ string, data any) (int64, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return 0, fmt.Errorf("event %s: %w", typ, err)
	}
	id, err := store.New(db).EventInsert(ctx, store.EventInsertParams{AccountID: accountID, Type: typ, Data: b})
	if err != nil {
		return 0, fmt.Errorf("record event %s: %w", typ, err)
	}
	return id, nil
}
