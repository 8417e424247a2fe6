package httpapi_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
)

// strictly decodes body into the generated wire type T, refusing any member T does
// not declare, then encodes T again: the result must be the body, member for member
// and null for null. So every field served is one openapi.yaml declares (e.do has
// already checked the body against the schema), and nothing the handler answers is
// lost or changed by the type the SDK decodes it with.
func strictly[T any](t *testing.T, what string, res response) T {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(res.Body))
	dec.DisallowUnknownFields()
	var v T
	require.NoError(t, dec.Decode(&v), "%s: %s", what, res.Body)
	again, err := json.Marshal(v)
	require.NoError(t, err)
	require.JSONEq(t, string(res.Body), string(again), what)
	return v
}

// TestWireTypesOfSendersEventsAndWebhooks: every answer of the senders, event
// endpoints, events and webhook endpoints routes is exactly its generated api type.
func TestWireTypesOfSendersEventsAndWebhooks(t *testing.T) {
	t.Parallel()
	// The fake provider listens on loopback: the development switch lets senders reach it.
	e := setup(t, func(c *config.Config) { c.EventAllowPrivate = true })
	pm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"ErrorCode":10,"Message":"Bad or missing Server API token."}`))
	}))
	t.Cleanup(pm.Close)
	do := func(method, path string, body any, want int) response {
		t.Helper()
		res := e.do(e.keyA, method, path, body)
		require.Equal(t, want, res.Status, "%s %s: %s", method, path, res.Body)
		return res
	}

	// Senders: a fractional rate keeps its digits (the rate is a double, not a float).
	sn := strictly[api.Sender](t, "create sender", do("POST", "/v1/senders", map[string]any{"name": "pm", "type": "postmark",
		"settings":    map[string]any{"endpoint": pm.URL, "message_stream": "broadcast"},
		"credentials": map[string]any{"server_token": "a-token-long-enough"}, "rate_per_second": 1234.5678}, http.StatusCreated))
	require.Equal(t, 1234.5678, sn.RatePerSecond)
	require.Contains(t, string(do("GET", "/v1/senders/"+itoa(sn.Id), nil, http.StatusOK).Body), `"paused_at":null`)
	id := itoa(sn.Id)
	strictly[api.Sender](t, "get sender", do("GET", "/v1/senders/"+id, nil, http.StatusOK))
	strictly[api.Sender](t, "update sender", do("PATCH", "/v1/senders/"+id, map[string]any{"max_connections": 3}, http.StatusOK))
	page := strictly[api.SenderPage](t, "list senders", do("GET", "/v1/senders", nil, http.StatusOK))
	require.Len(t, page.Data, 1)
	v := strictly[api.SenderVerifyResult](t, "verify sender", do("POST", "/v1/senders/"+id+"/verify", nil, http.StatusOK))
	require.False(t, v.Ok)
	require.NotNil(t, v.Step)

	// Event endpoints, their deliveries and the events.
	empty := strictly[api.EventEndpointPage](t, "list no event endpoints", do("GET", "/v1/event-endpoints", nil, http.StatusOK))
	require.NotNil(t, empty.Data, "an empty page is [], not null")
	ee := strictly[api.EventEndpointWithSecret](t, "create event endpoint",
		do("POST", "/v1/event-endpoints", map[string]any{"url": "https://example.com/hook"}, http.StatusCreated))
	eid := itoa(ee.Id)
	body := string(do("GET", "/v1/event-endpoints/"+eid, nil, http.StatusOK).Body)
	require.Contains(t, body, `"disabled_reason":null`)
	require.Contains(t, body, `"failing_since":null`)
	strictly[api.EventEndpoint](t, "get event endpoint", do("GET", "/v1/event-endpoints/"+eid, nil, http.StatusOK))
	strictly[api.EventEndpoint](t, "update event endpoint",
		do("PATCH", "/v1/event-endpoints/"+eid, map[string]any{"description": "results"}, http.StatusOK))
	strictly[api.EventEndpointPage](t, "list event endpoints", do("GET", "/v1/event-endpoints", nil, http.StatusOK))
	rot := strictly[api.EventEndpointWithSecret](t, "rotate event endpoint",
		do("POST", "/v1/event-endpoints/"+eid+"/rotate", map[string]any{"grace_seconds": 60}, http.StatusOK))
	require.NotNil(t, rot.PreviousSecretExpiresAt)
	ping := strictly[api.EventPingResult](t, "ping event endpoint", do("POST", "/v1/event-endpoints/"+eid+"/ping", nil, http.StatusAccepted))
	ds := strictly[api.EventDeliveryPage](t, "list deliveries", do("GET", "/v1/event-endpoints/"+eid+"/deliveries", nil, http.StatusOK))
	require.Len(t, ds.Data, 1)
	require.Contains(t, string(do("GET", "/v1/event-endpoints/"+eid+"/deliveries", nil, http.StatusOK).Body), `"delivered_at":null`)
	strictly[api.EventRedeliverResult](t, "redeliver event",
		do("POST", "/v1/event-endpoints/"+eid+"/redeliver", map[string]any{"event_id": ping.EventId}, http.StatusAccepted))
	strictly[api.EventRedeliverResult](t, "redeliver since",
		do("POST", "/v1/event-endpoints/"+eid+"/redeliver", map[string]any{"since": time.Now().Add(-time.Hour)}, http.StatusAccepted))
	// Events are read below the oldest running transaction of the cluster, which
	// other tests' transactions may hold back for a moment: wait for the ping's.
	var evs api.EventPage
	require.Eventually(t, func() bool {
		evs = strictly[api.EventPage](t, "list events", do("GET", "/v1/events", nil, http.StatusOK))
		return len(evs.Data) > 0
	}, 60*time.Second, 50*time.Millisecond, "the ping's event is listed")
	require.NotNil(t, evs.NextCursor)
	tail := strictly[api.EventPage](t, "list no newer events", do("GET", "/v1/events?after="+*evs.NextCursor, nil, http.StatusOK))
	require.NotNil(t, tail.Data, "an empty page is [], not null")
	require.Nil(t, tail.NextCursor)
	strictly[api.EventStreamToken](t, "stream token", do("POST", "/v1/events/stream-tokens", nil, http.StatusCreated))

	// Provider webhook endpoints and a delivery to one.
	wh := strictly[api.WebhookEndpointWithCredentials](t, "create webhook endpoint",
		do("POST", "/v1/webhook-endpoints", map[string]any{"source": "standard", "name": "crm"}, http.StatusCreated))
	require.NotNil(t, wh.Credentials.Secret)
	wid := itoa(wh.Id)
	strictly[api.WebhookEndpoint](t, "get webhook endpoint", do("GET", "/v1/webhook-endpoints/"+wid, nil, http.StatusOK))
	strictly[api.WebhookEndpointPage](t, "list webhook endpoints", do("GET", "/v1/webhook-endpoints", nil, http.StatusOK))
	wh = strictly[api.WebhookEndpointWithCredentials](t, "rotate webhook endpoint",
		do("POST", "/v1/webhook-endpoints/"+wid+"/rotate", map[string]any{"grace_seconds": 60}, http.StatusOK))
	ses := strictly[api.WebhookEndpointWithCredentials](t, "create ses endpoint", do("POST", "/v1/webhook-endpoints",
		map[string]any{"source": "ses", "topic_arns": []string{"arn:aws:sns:us-east-1:123456789012:bounces"}}, http.StatusCreated))
	require.Equal(t, &[]string{"arn:aws:sns:us-east-1:123456789012:bounces"}, ses.TopicArns)

	payload := []byte(`{"type":"subscriber.complained","data":{"email":"ada@example.com"}}`)
	key, err := base64.StdEncoding.DecodeString((*wh.Credentials.Secret)[len("whsec_"):])
	require.NoError(t, err)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%s.%s", "evt-wire", ts, payload)
	res := e.do("", "POST", wh.Path, payload, "webhook-id", "evt-wire", "webhook-timestamp", ts,
		"webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	got := strictly[api.WebhookDeliveryResult](t, "webhook delivery", res)
	require.Equal(t, api.WebhookDeliveryResult{Events: 1, Applied: 1, Suppressed: 1}, got)
}
