package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestCampaignDeliverAtLocal: a campaign's deliver_at_local is HH:MM on a 24-hour
// clock, kept on create and edit, cleared by null; a bad one is a 422 naming the
// field and changes nothing.
func TestCampaignDeliverAtLocal(t *testing.T) {
	t.Parallel()
	e := setup(t)
	c := createCampaign(t, e, map[string]any{"deliver_at_local": "09:00"})
	require.NotNil(t, c.DeliverAtLocal)
	require.Equal(t, "09:00", *c.DeliverAtLocal)
	id := itoa(c.Id)

	for _, bad := range []string{"9:00", "24:00", "09:60", "09:00:00", "noon"} {
		res := e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"deliver_at_local": bad, "name": "changed"})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, bad)
		require.Equal(t, []string{"/deliver_at_local"}, decodeAs[problem](t, res).pointers(), bad)
		res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "x", "subject": "x",
			"from_email": "a@example.com", "deliver_at_local": bad})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, bad)
		require.Equal(t, []string{"/deliver_at_local"}, decodeAs[problem](t, res).pointers(), bad)
	}
	res := e.do(e.keyA, "GET", "/v1/campaigns/"+id, nil)
	got := decodeAs[api.Campaign](t, res)
	require.Equal(t, "launch", got.Name, "a refused edit changes nothing")
	require.Equal(t, "09:00", *got.DeliverAtLocal)

	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"deliver_at_local": "23:59"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, "23:59", *decodeAs[api.Campaign](t, res).DeliverAtLocal)
	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"deliver_at_local": nil})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Nil(t, decodeAs[api.Campaign](t, res).DeliverAtLocal)
}

// TestAccountTimeZone: the account's default zone is UTC, set to an IANA name,
// and a name Go's time package does not know is a 422 naming the field.
func TestAccountTimeZone(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "GET", "/v1/account", nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Equal(t, "UTC", decodeAs[api.Account](t, res).TimeZone)
	for _, bad := range []string{"Mars/Olympus", "Local", ""} {
		res = e.do(e.keyA, "PATCH", "/v1/account", map[string]any{"time_zone": bad})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, bad)
		require.Equal(t, []string{"/time_zone"}, decodeAs[problem](t, res).pointers(), bad)
	}
	res = e.do(e.keyA, "PATCH", "/v1/account", map[string]any{"time_zone": "Europe/Berlin"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, "Europe/Berlin", decodeAs[api.Account](t, res).TimeZone)
	res = e.do(e.keyA, "GET", "/v1/account", nil)
	require.Equal(t, "Europe/Berlin", decodeAs[api.Account](t, res).TimeZone)
}
