package event

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/backoff"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// BatchType is the type of a batched delivery's envelope; its data is the array of events.
const BatchType = "event.batch"

// outcome of one attempt.
type outcome struct {
	status string // delivered, pending, failed
	// failures is the delivery's count of failures after this attempt: it moves
	// the retry schedule (a Retry-After answer leaves it as it was).
	failures int32
	code     *int32
	err      string
	next     *time.Time
	disable  string // non-empty: disable the endpoint with this reason
}

// deliver makes one attempt of a claimed delivery and records its outcome.
func (w *Worker) deliver(d store.EventDeliveryClaimRow) {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout+10*time.Second)
	defer cancel()
	start := w.clk.Instant()
	out := w.attempt(ctx, d)
	latency := w.clk.Since(start)
	w.metrics.latency.Observe(latency.Seconds())
	label := out.status
	if out.status == "pending" {
		label = "retry"
	}
	w.metrics.deliveries.WithLabelValues(label).Inc()
	if err := w.record(ctx, d, out, latency); err != nil {
		// The lease runs out and the delivery is attempted again: at least once.
		w.log.Warn("record event delivery", "delivery", d.ID, "err", err)
		return
	}
	w.signals.recorded.Signal(attemptSignal{delivery: d.ID, status: out.status})
}

// attempt posts the delivery and classifies the answer (Standard Webhooks: 2xx
// delivered, 3xx a failure, 410 disables the endpoint, 429/503 honour Retry-After).
func (w *Worker) attempt(ctx context.Context, d store.EventDeliveryClaimRow) outcome {
	q := store.New(w.pool)
	ep, err := q.EventEndpointForDelivery(ctx, d.EndpointID)
	if err != nil {
		return w.failure(d, nil, "endpoint: "+err.Error(), nil)
	}
	evs, err := q.EventGetMany(ctx, store.EventGetManyParams{AccountID: d.AccountID, Ids: d.EventIds})
	if err != nil {
		return w.failure(d, nil, "events: "+err.Error(), nil)
	}
	if len(evs) == 0 {
		return outcome{status: "failed", failures: d.Failures + 1, err: "the events are past retention"}
	}
	id, body, err := payload(d, evs)
	if err != nil {
		return outcome{status: "failed", failures: d.Failures + 1, err: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.Url, bytes.NewReader(body))
	if err != nil {
		return outcome{status: "failed", failures: d.Failures + 1, err: "bad url: " + err.Error()}
	}
	setHeaders(req, id, w.clk.Now(), body, append([]string{ep.Secret}, ep.Previous...))
	res, err := w.client.Do(req)
	if err != nil {
		msg := err.Error()
		if refused(err) {
			msg = "refused by the address guard (loopback, private, link-local or reserved address): " + msg
		}
		return w.failure(d, nil, msg, nil)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	_ = res.Body.Close()
	code := int32(res.StatusCode)
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return outcome{status: "delivered", failures: d.Failures, code: &code}
	case res.StatusCode == http.StatusGone:
		return outcome{status: "failed", failures: d.Failures + 1, code: &code, err: "410 Gone",
			disable: "the endpoint answered 410 Gone"}
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusServiceUnavailable:
		if after, ok := retryAfter(res.Header.Get("Retry-After"), w.clk.Now()); ok {
			return w.failure(d, &code, res.Status, &after)
		}
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return w.failure(d, &code, res.Status+": redirects are not followed; update the endpoint URL", nil)
	}
	return w.failure(d, &code, res.Status, nil)
}

// failure schedules the next attempt, or gives up after the last one. With the
// receiver's Retry-After (after) the next attempt is then and the failure does
// not count: the receiver is throttling, not failing, and answers like it may come
// many times in a row without using up the schedule. Every other failure counts
// and waits the schedule's next step. Attempts that never got an outcome (a
// worker killed mid-delivery) count neither.
func (w *Worker) failure(d store.EventDeliveryClaimRow, code *int32, msg string, after *time.Time) outcome {
	failures := d.Failures
	if after == nil {
		failures++
	}
	next, ok := w.retryAt(int(failures), d.CreatedAt, w.clk.Now(), after)
	if !ok {
		return outcome{status: "failed", failures: failures, code: code, err: msg}
	}
	return outcome{status: "pending", failures: failures, code: code, err: msg, next: &next}
}

// retryAfter is when a receiver's Retry-After header (backoff.RetryAfter: seconds
// or an HTTP date, at most a day) asks to come back, at least a second from now:
// an answer of 0 or a past date is not an invitation to hammer it.
func retryAfter(h string, now time.Time) (time.Time, bool) {
	d, ok := backoff.RetryAfter(h, now)
	if !ok {
		return time.Time{}, false
	}
	return now.Add(max(d, time.Second)), true
}

// payload is the body of a delivery and its webhook-id: one event as
// {id, type, timestamp, data}, webhook-id the event's id; or a batch envelope
// {type: event.batch, timestamp, data: [events…]}, webhook-id the delivery's.
// Both stay the same across retries.
func payload(d store.EventDeliveryClaimRow, rows []store.EventGetManyRow) (string, []byte, error) {
	evs := make([]Event, 0, len(rows))
	for _, r := range rows {
		evs = append(evs, Event{ID: EventID(r.ID), Type: r.Type, Timestamp: r.OccurredAt.UTC(), Data: r.Data})
	}
	if !d.Batch {
		b, err := json.Marshal(evs[0])
		return evs[0].ID, b, err
	}
	b, err := json.Marshal(struct {
		Type      string    `json:"type"`
		Timestamp time.Time `json:"timestamp"`
		Data      []Event   `json:"data"`
	}{BatchType, evs[0].Timestamp, evs})
	return "batch_" + strconv.FormatInt(d.ID, 10), b, err
}

// record writes the outcome (fenced on the claim's attempts), the endpoint's
// health, and disables an endpoint that answered 410 or has failed for
// DisableAfter without a success.
func (w *Worker) record(ctx context.Context, d store.EventDeliveryClaimRow, out outcome, latency time.Duration) error {
	now := w.clk.Now()
	var errMsg *string
	if out.err != "" {
		m := out.err
		if len(m) > 500 {
			m = m[:500]
		}
		errMsg = &m
	}
	ms := int32(latency.Milliseconds())
	return postgres.InTx(ctx, w.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		n, err := q.EventDeliveryRecord(ctx, store.EventDeliveryRecordParams{
			Status: out.status, NextAttemptAt: out.next, Failures: out.failures, StatusCode: out.code, Error: errMsg,
			LatencyMs: &ms, Now: &now, ID: d.ID, Attempts: d.Attempts})
		if err != nil || n == 0 {
			return err // n == 0: a later claim owns the row now
		}
		since, err := q.EventEndpointHealth(ctx, store.EventEndpointHealthParams{
			Ok: out.status == "delivered", Now: &now, ID: d.EndpointID})
		if postgres.NoRows(err) {
			return nil // a success on a healthy endpoint, or deleted meanwhile
		}
		if err != nil {
			return err
		}
		reason := out.disable
		if reason == "" && since != nil && now.Sub(*since) >= w.opts.DisableAfter {
			reason = fmt.Sprintf("every delivery failed since %s", since.UTC().Format(time.RFC3339))
		}
		if reason == "" {
			return nil
		}
		return disable(ctx, tx, d.EndpointID, reason)
	})
}

// disable turns an endpoint off once, parks its pending deliveries and records
// endpoint.disabled in the same transaction.
func disable(ctx context.Context, tx pgx.Tx, endpointID int64, reason string) error {
	q := store.New(tx)
	ep, err := q.EventEndpointDisable(ctx, store.EventEndpointDisableParams{Reason: &reason, ID: endpointID})
	if postgres.NoRows(err) {
		return nil // already disabled
	}
	if err != nil {
		return err
	}
	if err := q.EventDeliveryPark(ctx, endpointID); err != nil {
		return err
	}
	return Emit(ctx, tx, ep.AccountID, EndpointDisabled, map[string]any{
		"endpoint_id": ep.ID, "url": ep.Url, "reason": reason})
}
