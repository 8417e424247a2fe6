package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
)

// TestEventEndpointSubscribesToEveryType: an endpoint may name any type of the
// catalogue in event_types, endpoint.ping included (it is in the EventType enum and
// in docs/events.md), and a type outside it is a 422 naming the item.
func TestEventEndpointSubscribesToEveryType(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.EventAllowPrivate = true })
	res := e.do(e.keyA, "POST", "/v1/event-endpoints", map[string]any{"url": "https://example.com/hook",
		"event_types": []string{"endpoint.ping", "send.sent"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), `"event_types":["endpoint.ping","send.sent"]`)

	res = e.do(e.keyA, "POST", "/v1/event-endpoints", map[string]any{"url": "https://example.com/hook",
		"event_types": []string{"send.sent", "send.bogus"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), `/event_types/1`)
}
