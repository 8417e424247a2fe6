package webhook

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/suppression"
)

// Unauthorized is the one answer to a delivery that does not authenticate, whatever
// the reason (kept in Err for the log only).
func Unauthorized(err error) error {
	return &apperr.Error{Code: apperr.Unauthorized, Message: "the webhook signature does not verify", Err: err}
}

// Result says what one delivery did.
type Result struct {
	Events     int
	Applied    int
	Replayed   int
	Suppressed int
}

// Deliver verifies and applies one POST to /v1/webhooks/{source}/{endpointID}: body
// is the raw request body, h its headers. An unknown source or endpoint, an endpoint
// of another source and a bad or missing signature are all the same unauthorized
// (Unauthorized), so a caller without a secret cannot tell which ids exist; nothing
// is read beyond the signature. When Deliver returns nil, the events and their
// suppressions are committed.
func (s *Service) Deliver(ctx context.Context, source string, endpointID int64, h Header, body []byte) (Result, error) {
	if !ValidSource(source) {
		return Result{}, Unauthorized(fmt.Errorf("unknown webhook source %q", source))
	}
	ep, err := store.New(s.pool).WebhookEndpointGetForDelivery(ctx, store.WebhookEndpointGetForDeliveryParams{ID: endpointID, Source: source})
	if err = postgres.Error(err, "webhook endpoint"); apperr.Is(err, apperr.NotFound) {
		return Result{}, Unauthorized(fmt.Errorf("no %s endpoint %d", source, endpointID))
	}
	if err != nil {
		return Result{}, err
	}
	now := s.opts.Now()
	previous, err := store.New(s.pool).WebhookPreviousSecretsValid(ctx, store.WebhookPreviousSecretsValidParams{
		AccountID: ep.AccountID, EndpointID: ep.ID, Now: &now,
	})
	if err != nil {
		return Result{}, fmt.Errorf("webhook previous secrets: %w", err)
	}
	// The current secret first, then every rotated-out one still in its grace period.
	secrets := append([]string{ep.Secret}, previous...)
	unauthorized := Unauthorized
	var events []Event
	switch source {
	case SourceStandard, SourceResend:
		prefix := "webhook"
		if source == SourceResend {
			prefix = "svix"
		}
		id, err := verifyStandard(h, prefix, body, secrets, now)
		if err != nil {
			return Result{}, unauthorized(err)
		}
		if err := checkText(body, ""); err != nil {
			return Result{}, err
		}
		if source == SourceStandard {
			events, err = parseStandard(id, body)
		} else {
			events, err = parseResend(id, body)
		}
		if err != nil {
			return Result{}, invalid(err)
		}
	case SourceMailgun:
		token, err := verifyMailgun(body, secrets, now)
		if err != nil {
			return Result{}, unauthorized(err)
		}
		if err := checkText(body, ""); err != nil {
			return Result{}, err
		}
		if events, err = parseMailgun(token, body); err != nil {
			return Result{}, invalid(err)
		}
	case SourceSendGrid:
		if err := verifySendGrid(h, body, secrets, now); err != nil {
			return Result{}, unauthorized(err)
		}
		if err := checkText(body, ""); err != nil {
			return Result{}, err
		}
		if events, err = parseSendGrid(body); err != nil {
			return Result{}, invalid(err)
		}
	case SourcePostmark:
		if err := verifyPostmark(h, secrets); err != nil {
			return Result{}, unauthorized(err)
		}
		if err := checkText(body, ""); err != nil {
			return Result{}, err
		}
		if events, err = parsePostmark(body); err != nil {
			return Result{}, invalid(err)
		}
	case SourceSES:
		var set settings
		_ = json.Unmarshal(ep.Settings, &set)
		m, err := s.verifySNS(ctx, body, set.TopicARNs)
		if err != nil {
			return Result{}, unauthorized(err)
		}
		if err := checkText(body, ""); err != nil {
			return Result{}, err
		}
		if err := checkText([]byte(m.Message), "/Message"); err != nil {
			return Result{}, err
		}
		if m.Type != "Notification" {
			return s.recordSubscription(ctx, ep, m)
		}
		if events, err = parseSES(m.MessageID, m.Message); err != nil {
			return Result{}, invalid(err)
		}
	}
	if err := checkEvents(events); err != nil {
		return Result{}, err
	}
	return s.Apply(ctx, ep.AccountID, ep.Source, fmt.Sprintf("webhook:%s:%d", ep.Source, ep.ID), events)
}

func invalid(err error) error {
	return &apperr.Error{Code: apperr.Invalid, Message: "the webhook payload cannot be read: " + err.Error(), Err: err}
}

// recordSubscription keeps an SNS (un)subscription confirmation for the operator. We
// never fetch SubscribeURL ourselves: a valid Amazon signature proves only that some
// SNS topic sent it, and the TopicArn allow-list is the tenant's statement of intent.
func (s *Service) recordSubscription(ctx context.Context, ep store.WebhookEndpoint, m *snsMessage) (Result, error) {
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		payload, _ := json.Marshal(map[string]string{"topic_arn": m.TopicArn, "subscribe_url": m.SubscribeURL})
		n, err := q.WebhookEventInsert(ctx, store.WebhookEventInsertParams{
			AccountID: ep.AccountID, Source: SourceSES, EventID: m.MessageID, Type: "sns." + m.Type, Payload: payload,
		})
		if err != nil || n == 0 || m.Type != "SubscriptionConfirmation" {
			return err
		}
		return q.WebhookEndpointSetSubscribeURL(ctx, store.WebhookEndpointSetSubscribeURLParams{
			SubscribeUrl: &m.SubscribeURL, AccountID: ep.AccountID, ID: ep.ID,
		})
	})
	return Result{Events: 1}, err
}

// reasonOf maps a kind to the suppression reason it causes at once.
var reasonOf = map[Kind]string{
	KindUnsubscribe: suppression.ReasonUnsubscribe,
	KindHardBounce:  suppression.ReasonHardBounce,
	KindComplaint:   suppression.ReasonComplaint,
}

// eventOf names the event a suppression reason reports to the account: every
// newly applied opt-out, bounce (a hard one, or the soft one that reached the limit)
// and complaint is reported, whether or not the address was suppressed already.
var eventOf = map[string]string{
	suppression.ReasonUnsubscribe: event.SubscriberUnsubscribed,
	suppression.ReasonHardBounce:  event.SubscriberBounced,
	suppression.ReasonComplaint:   event.SubscriberComplained,
}

// Apply records every event id and its effect for the account in one
// transaction: the id insert, keyed by (account, source, event id), is the gate,
// so an event seen before changes nothing, and a crash before commit leaves
// nothing behind for the provider's retry to trip over. origin names where the
// events came from in the suppressions and events it writes. Provider webhooks
// and the bounce mailbox (internal/bounce) both apply through it.
func (s *Service) Apply(ctx context.Context, accountID int64, source, origin string, events []Event) (Result, error) {
	res := Result{Events: len(events)}
	now := s.opts.Now()
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		res.Applied, res.Replayed, res.Suppressed = 0, 0, 0
		q := store.New(tx)
		for _, e := range events {
			if e.Kind == KindOther || e.ID == "" {
				continue // deliveries, opens, clicks: nothing to do, nothing to remember
			}
			var lower *string
			addr, addrErr := address.Parse(e.Email)
			if addrErr == nil {
				lower = &addr.Lower
			}
			payload, _ := json.Marshal(e)
			n, err := q.WebhookEventInsert(ctx, store.WebhookEventInsertParams{
				AccountID: accountID, Source: source, EventID: e.ID, Type: e.Type, EmailLower: lower, Payload: payload,
			})
			if err != nil {
				return fmt.Errorf("record webhook event: %w", err)
			}
			if n == 0 {
				res.Replayed++
				continue
			}
			res.Applied++
			if e.JobID != "" || e.ProviderMessageID != "" {
				fb := string(e.Kind)
				if _, err := q.SendRecordFeedback(ctx, store.SendRecordFeedbackParams{
					Feedback: &fb, Now: &now, AccountID: accountID,
					JobID: optional.NonZero(e.JobID), ProviderMessageID: optional.NonZero(e.ProviderMessageID),
				}); err != nil {
					return fmt.Errorf("record feedback on send: %w", err)
				}
			}
			if lower == nil {
				continue // no usable address: the event is recorded, nothing to suppress
			}
			reason, source := reasonOf[e.Kind], origin
			if e.Kind == KindSoftBounce {
				window := s.opts.SoftBounceWindow.Seconds()
				if err := q.SoftBouncePrune(ctx, store.SoftBouncePruneParams{
					AccountID: accountID, EmailLower: *lower, Now: &now, WindowSeconds: window,
				}); err != nil {
					return fmt.Errorf("prune soft bounces: %w", err)
				}
				count, err := q.SoftBounceAddAndCount(ctx, store.SoftBounceAddAndCountParams{
					AccountID: accountID, EmailLower: *lower, MessageKey: messageKey(e), Now: &now,
					WindowSeconds: window,
				})
				if err != nil {
					return fmt.Errorf("count soft bounces: %w", err)
				}
				if count < int64(s.opts.SoftBounceLimit) {
					continue
				}
				reason, source = suppression.ReasonHardBounce, origin+":soft-bounces"
			}
			_, inserted, err := suppression.Add(ctx, tx, accountID, addr.Email, reason, source)
			if err != nil {
				return err
			}
			if err := event.Emit(ctx, tx, accountID, eventOf[reason], map[string]any{
				"email": addr.Lower, "kind": e.Kind, "source": source, "provider_event_id": e.ID,
				"job_id": e.JobID, "provider_message_id": e.ProviderMessageID,
			}); err != nil {
				return err
			}
			if inserted {
				res.Suppressed++
			}
		}
		return nil
	})
	return res, err
}

// messageKey names the message an event is about, so the delays a provider reports
// on each retry of one message count as one soft bounce. The provider's message id
// comes first (every provider sends it on every event), then our job id; an event
// with neither counts on its own.
func messageKey(e Event) string {
	switch {
	case e.ProviderMessageID != "":
		return "pm:" + e.ProviderMessageID
	case e.JobID != "":
		return "job:" + e.JobID
	}
	return "event:" + e.ID
}
