package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// eventTypes polls GET /v1/events until want events are visible (events of a
// transaction are served once every older transaction on the server ended) and
// returns the types of all of them, in order.
func (e *optoutEnv) eventTypes(t *testing.T, want int) []string {
	t.Helper()
	var types []string
	require.Eventually(t, func() bool {
		status, page := e.api(t, http.MethodGet, "/v1/events?limit=500", nil)
		if status == http.StatusTooManyRequests {
			return false // polled past the per-key rate limit while events wait for older transactions
		}
		require.Equal(t, http.StatusOK, status)
		types = types[:0]
		for _, ev := range page["data"].([]any) {
			types = append(types, ev.(map[string]any)["type"].(string))
		}
		return len(types) >= want
	}, 30*time.Second, 50*time.Millisecond)
	return types
}

// TestEveryChangeWritesItsEventOnlyWhenItCommits walks the API-side state changes:
// each writes its event in its own transaction; a change that is refused (or
// changes nothing) writes none.
func TestEveryChangeWritesItsEventOnlyWhenItCommits(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	c := "/v1/campaigns/" + itoa(e.campaignID)

	// The campaign has no template: the approve is refused and rolled back.
	status, _ := e.api(t, http.MethodPost, c+"/approve", map[string]any{})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	status, _ = e.api(t, http.MethodPatch, c, map[string]any{"text_template": "Hi"})
	require.Equal(t, http.StatusOK, status)
	status, _ = e.api(t, http.MethodPost, c+"/approve", map[string]any{"scheduled_for": time.Now().Add(time.Hour)})
	require.Equal(t, http.StatusOK, status)
	status, _ = e.api(t, http.MethodPost, c+"/pause", nil) // approved, not sending: 409, no event
	require.Equal(t, http.StatusConflict, status)
	_, err := e.pool.Exec(e.ctx, `UPDATE campaigns SET status = 'sending' WHERE id = $1`, e.campaignID)
	require.NoError(t, err)
	for _, step := range []string{"/pause", "/resume", "/cancel"} {
		status, _ = e.api(t, http.MethodPost, c+step, nil)
		require.Equal(t, http.StatusOK, status, step)
	}

	// Suppressions by API: a repeat changes nothing, so reports nothing.
	for range 2 {
		status, _ = e.api(t, http.MethodPost, "/v1/suppressions", map[string]any{"email": "x@example.com"})
		require.Contains(t, []int{http.StatusCreated, http.StatusOK}, status)
	}
	for _, want := range []int{http.StatusNoContent, http.StatusNotFound} {
		status, _ = e.api(t, http.MethodDelete, "/v1/suppressions/x@example.com", nil)
		require.Equal(t, want, status)
	}

	// One-click unsubscribe, twice.
	for range 2 {
		res, err := http.Post(e.link(), "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
	}

	// Provider events: a bounce of a new address, a complaint about one already
	// suppressed (still reported: it happened), and a replay (nothing).
	status, created := e.api(t, http.MethodPost, "/v1/webhook-endpoints", map[string]any{"source": "standard"})
	require.Equal(t, http.StatusCreated, status)
	secret := created["credentials"].(map[string]any)["secret"].(string)
	path := created["path"].(string)
	bounce := []byte(`{"type":"subscriber.bounced","data":{"email":"bob@example.com"}}`)
	complaint := []byte(`{"type":"subscriber.complained","data":{"email":"ada@example.com","job_id":"job-ada"}}`)
	for _, d := range []struct {
		id   string
		body []byte
	}{{"p-1", bounce}, {"p-2", complaint}, {"p-1", bounce}} {
		status, _ = deliverSigned(t, e.url+path, secret, d.id, time.Now(), d.body)
		require.Equal(t, http.StatusOK, status)
	}

	want := []string{"campaign.approved", "campaign.paused", "campaign.resumed", "campaign.cancelled",
		"suppression.created", "suppression.deleted",
		"suppression.created", "subscriber.unsubscribed",
		"suppression.created", "subscriber.bounced", "subscriber.complained"}
	require.Equal(t, want, e.eventTypes(t, len(want)))

	status, page := e.api(t, http.MethodGet, "/v1/events?type=subscriber.bounced,subscriber.complained", nil)
	require.Equal(t, http.StatusOK, status)
	data := page["data"].([]any)
	require.Len(t, data, 2)
	b, _ := json.Marshal(data[0].(map[string]any)["data"])
	require.Contains(t, string(b), `"email":"bob@example.com"`)
	require.Contains(t, string(b), `"provider_event_id":"p-1"`)
}
