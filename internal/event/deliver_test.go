package event

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// TestDeliverySignedForTheReferenceReceiver: a subscribed endpoint gets each event
// once, as {id, type, timestamp, data}, with webhook-id = the event id and a
// signature the Standard Webhooks library verifies; an unsubscribed type is not sent.
func TestDeliverySignedForTheReferenceReceiver(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	ep, secret := e.endpoint(rcv.URL, EndpointInput{EventTypes: &[]string{CampaignSent, SendSent}})
	rcv.secrets = []string{secret}
	e.emit(CampaignSent, map[string]any{"campaign_id": 7})
	e.emit(SuppressionCreated, map[string]any{"email": "x@example.com"})
	e.emit(SendSent, map[string]any{"send_id": 9})
	reg := prometheus.NewRegistry()
	w := e.worker(func(o *WorkerOptions) { o.Registry = reg })
	eventually(t, func() bool { w.round(t); got, _ := rcv.received(); return len(got) == 2 })
	families, err := reg.Gather()
	require.NoError(t, err)
	seen := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				seen[f.GetName()+"/"+m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				seen[f.GetName()] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	require.Equal(t, 2.0, seen["sendonce_event_deliveries_total/delivered"])
	require.Equal(t, 2.0, seen["sendonce_event_delivery_seconds"])
	got, bad := rcv.received()
	require.Empty(t, bad)
	// Deliveries run concurrently: no order between them.
	byType := map[string]Event{}
	for _, r := range got {
		ev := payloadOf(t, r.Body)
		require.Equal(t, ev.ID, r.ID, "webhook-id is the event id")
		byType[ev.Type] = ev
	}
	require.JSONEq(t, `{"campaign_id":7}`, string(byType[CampaignSent].Data))
	require.JSONEq(t, `{"send_id":9}`, string(byType[SendSent].Data))
	w.round(t)
	got, _ = rcv.received()
	require.Len(t, got, 2, "a delivered event is not sent again")
	for _, d := range e.deliveries(ep.ID) {
		require.Equal(t, "delivered", d.Status)
		require.Equal(t, 204, *d.StatusCode)
	}
}

// TestDeliveryRetriesKeepTheID: failures (a 500, a 302) are retried on the
// schedule with the same webhook-id until a 2xx; the log shows each attempt's code.
func TestDeliveryRetriesKeepTheID(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	rcv.statuses = []int{500, 302}
	rcv.header.Set("Location", "http://127.0.0.1:1/elsewhere")
	ep, secret := e.endpoint(rcv.URL, EndpointInput{})
	rcv.secrets = []string{secret}
	e.emit(SendFailed, map[string]any{"send_id": 1})
	e.running().attempts(t, 3)
	got, bad := rcv.received()
	require.Empty(t, bad)
	require.Equal(t, got[0].ID, got[1].ID)
	require.Equal(t, got[0].ID, got[2].ID)
	ds := e.deliveries(ep.ID)
	require.Len(t, ds, 1)
	require.Equal(t, "delivered", ds[0].Status)
	require.Equal(t, 3, ds[0].Attempts)
	got2, err := e.svc.Get(context.Background(), e.account, ep.ID)
	require.NoError(t, err)
	require.Nil(t, got2.FailingSince, "a success ends the failing run")
}

// TestDeliveryGivesUpAfterTheSchedule: past the last retry the delivery fails;
// an endpoint failing for DisableAfter is disabled once, with endpoint.disabled.
func TestDeliveryGivesUpAfterTheSchedule(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	rcv.statuses = []int{500, 500, 500, 500, 500}
	ep, _ := e.endpoint(rcv.URL, EndpointInput{})
	e.emit(SendUnknown, map[string]any{"send_id": 1})
	now := time.Now()
	clock := func() time.Time { return now }
	w := e.worker(func(o *WorkerOptions) { o.Now = clock; o.DisableAfter = time.Hour })
	eventually(t, func() bool {
		now = now.Add(time.Second)
		w.round(t)
		ds := e.deliveries(ep.ID)
		return len(ds) == 1 && ds[0].Status == "failed"
	})
	got, _ := rcv.received()
	require.Len(t, got, 4, "the first attempt and three retries")
	// Still enabled: it has failed for seconds, not for DisableAfter.
	cur, err := e.svc.Get(context.Background(), e.account, ep.ID)
	require.NoError(t, err)
	require.True(t, cur.Enabled)

	e.emit(SendUnknown, map[string]any{"send_id": 2})
	now = now.Add(2 * time.Hour)
	eventually(t, func() bool {
		w.round(t)
		cur, err := e.svc.Get(context.Background(), e.account, ep.ID)
		require.NoError(t, err)
		return !cur.Enabled
	})
	cur, err = e.svc.Get(context.Background(), e.account, ep.ID)
	require.NoError(t, err)
	require.Contains(t, *cur.DisabledReason, "every delivery failed since")
	var evs []Event
	eventually(t, func() bool { evs = e.list(EndpointDisabled); return len(evs) > 0 })
	require.Len(t, evs, 1)
	var data struct {
		EndpointID int64 `json:"endpoint_id"`
	}
	require.NoError(t, json.Unmarshal(evs[0].Data, &data))
	require.Equal(t, ep.ID, data.EndpointID)
}

// TestGoneDisablesTheEndpoint: a 410 disables the endpoint at once, parks what is
// pending, and records endpoint.disabled; enabling it sends the parked deliveries.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	rcv.statuses = []int{http.StatusGone}
	ep, _ := e.endpoint(rcv.URL, EndpointInput{EventTypes: &[]string{SendSent}})
	e.emit(SendSent, map[string]any{"send_id": 1})
	w := e.worker()
	eventually(t, func() bool {
		w.round(t)
		cur, err := e.svc.Get(context.Background(), e.account, ep.ID)
		require.NoError(t, err)
		return !cur.Enabled
	})
	e.emit(SendSent, map[string]any{"send_id": 2})
	eventually(t, func() bool { return len(e.list(EndpointDisabled)) == 1 })
	w.round(t)
	got, _ := rcv.received()
	require.Len(t, got, 1, "a disabled endpoint gets nothing")

	enabled := true
	_, err := e.svc.Update(context.Background(), e.account, ep.ID, EndpointInput{Enabled: &enabled})
	require.NoError(t, err)
	eventually(t, func() bool { w.round(t); got, _ := rcv.received(); return len(got) == 2 })
	got, _ = rcv.received()
	require.Equal(t, SendSent, payloadOf(t, got[1].Body).Type)
	require.JSONEq(t, `{"send_id":2}`, string(payloadOf(t, got[1].Body).Data))
}

// TestRetryAfterIsHonoured: a 429 with Retry-After waits that long, not the schedule's 1 ms.
func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	rcv.statuses = []int{http.StatusTooManyRequests}
	rcv.header.Set("Retry-After", "3600")
	ep, _ := e.endpoint(rcv.URL, EndpointInput{})
	e.emit(SendSent, map[string]any{"send_id": 1})
	start := time.Now()
	require.Equal(t, "pending", e.running().attempts(t, 1)[0].status)
	ds := e.deliveries(ep.ID)
	require.Equal(t, "pending", ds[0].Status)
	require.Equal(t, 429, *ds[0].StatusCode)
	require.True(t, ds[0].NextAttemptAt.After(start.Add(59*time.Minute)), "next attempt %s", ds[0].NextAttemptAt)
}

// TestRotationSignsWithBothSecrets: during the grace period every delivery carries
// a v1 signature per secret, so receivers holding either one verify.
func TestRotationSignsWithBothSecrets(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	ep, old := e.endpoint(rcv.URL, EndpointInput{})
	_, fresh, exp, err := e.svc.Rotate(context.Background(), e.account, ep.ID, time.Hour)
	require.NoError(t, err)
	require.NotNil(t, exp)
	require.NotEqual(t, old, fresh)
	rcv.secrets = []string{old, fresh}
	e.emit(SendSent, map[string]any{"send_id": 1})
	w := e.running()
	w.attempts(t, 1)
	_, bad := rcv.received()
	require.Empty(t, bad)

	// Without grace the old secret stops at once.
	_, newest, _, err := e.svc.Rotate(context.Background(), e.account, ep.ID, 0)
	require.NoError(t, err)
	rcv.mu.Lock()
	rcv.secrets = []string{newest}
	rcv.mu.Unlock()
	e.emit(SendSent, map[string]any{"send_id": 2})
	w.attempts(t, 1)
	got, bad := rcv.received()
	require.Empty(t, bad)
	require.Len(t, strings.Fields(got[1].Sig), 2, "the new secret and the first one, still in its grace period")
}

// TestBatchingPerRecipientEvents: a batching endpoint gets send.* events as
// event.batch envelopes of at most batch_size, each carrying the events' own ids;
// other types still go one by one.
func TestBatchingPerRecipientEvents(t *testing.T) {
	t.Parallel()
	e := setup(t)
	rcv := newReceiver(t)
	size := 10
	ep, secret := e.endpoint(rcv.URL, EndpointInput{BatchSize: &size})
	rcv.secrets = []string{secret}
	for i := range 25 {
		e.emit(SendSent, map[string]any{"send_id": i})
	}
	e.emit(CampaignSent, map[string]any{"campaign_id": 1})
	w := e.worker()
	// A fan-out takes what is committed below the horizon at that moment and does
	// not wait for a batch to fill, so how the 25 split depends on timing: at least
	// three batches, each at most batch_size, every event in exactly one.
	seen := map[string]bool{}
	singles := 0
	eventually(t, func() bool {
		w.round(t)
		got, bad := rcv.received()
		require.Empty(t, bad)
		seen, singles = map[string]bool{}, 0
		for _, r := range got {
			var env struct {
				Type string  `json:"type"`
				Data []Event `json:"data"`
			}
			if json.Unmarshal(r.Body, &env) == nil && env.Type == BatchType {
				require.LessOrEqual(t, len(env.Data), size)
				require.Contains(t, r.ID, "batch_")
				for _, ev := range env.Data {
					require.Equal(t, SendSent, ev.Type)
					require.False(t, seen[ev.ID], "event %s in two deliveries", ev.ID)
					seen[ev.ID] = true
				}
				continue
			}
			require.Equal(t, CampaignSent, payloadOf(t, r.Body).Type, "other types go one by one")
			singles++
		}
		return len(seen) == 25 && singles == 1
	})
	n := len(e.deliveries(ep.ID))
	require.GreaterOrEqual(t, n, 4)
	require.Less(t, n, 26, "batched, not one POST per event")
}
