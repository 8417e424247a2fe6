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

// TestCampaignSendWindow: a campaign's and a sequence's send_window round-trip,
// null clears a campaign's, and every bad part is a 422 naming its field that
// changes nothing (the spec's own checks and the service's name the same field).
func TestCampaignSendWindow(t *testing.T) {
	t.Parallel()
	e := setup(t)
	win := map[string]any{"days": []string{"mon", "fri"}, "start": "22:00", "end": "06:00", "time_zone": "Europe/Berlin"}
	c := createCampaign(t, e, map[string]any{"send_window": win})
	require.NotNil(t, c.SendWindow)
	require.Equal(t, []api.SendWindowDays{"mon", "fri"}, c.SendWindow.Days)
	require.Equal(t, "22:00", c.SendWindow.Start)
	require.Equal(t, "Europe/Berlin", *c.SendWindow.TimeZone)
	id := itoa(c.Id)

	for field, bad := range map[string]map[string]any{
		"/send_window/days":      {"days": []string{}, "start": "09:00", "end": "17:00"},
		"/send_window/days/1":    {"days": []string{"mon", "mon"}, "start": "09:00", "end": "17:00"},
		"/send_window/start":     {"days": []string{"mon"}, "start": "9:00", "end": "17:00"},
		"/send_window/end":       {"days": []string{"mon"}, "start": "09:00", "end": "09:00"},
		"/send_window/time_zone": {"days": []string{"mon"}, "start": "09:00", "end": "17:00", "time_zone": "Mars/Olympus"},
	} {
		res := e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"send_window": bad, "name": "changed"})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, field)
		require.Equal(t, []string{field}, decodeAs[problem](t, res).pointers(), field)
		res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "x", "subject": "x",
			"from_email": "a@example.com", "send_window": bad})
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, field)
	}
	res := e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"send_window": map[string]any{
		"days": []string{"mon"}, "start": "09:00", "end": "17:00", "when": "always"}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "an unknown member")
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id, nil)
	got := decodeAs[api.Campaign](t, res)
	require.Equal(t, "launch", got.Name, "a refused edit changes nothing")
	require.Equal(t, "22:00", got.SendWindow.Start)

	res = e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"send_window": nil})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Nil(t, decodeAs[api.Campaign](t, res).SendWindow)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+id, nil)
	require.Nil(t, decodeAs[api.Campaign](t, res).SendWindow)

	seq := map[string]any{"name": "welcome", "trigger": map[string]any{"type": "manual"}, "time_zone": "Asia/Tokyo",
		"steps":       []any{map[string]any{"type": "wait", "duration": "1d"}},
		"send_window": map[string]any{"days": []string{"sat", "sun"}, "start": "10:00", "end": "12:00"}}
	res = e.do(e.keyA, "POST", "/v1/sequences", seq)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	s := decodeAs[api.Sequence](t, res)
	require.NotNil(t, s.SendWindow)
	require.Equal(t, []api.SendWindowDays{"sat", "sun"}, s.SendWindow.Days)
	seq["send_window"] = map[string]any{"days": []string{"someday"}, "start": "10:00", "end": "12:00"}
	res = e.do(e.keyA, "PUT", "/v1/sequences/"+itoa(s.Id), seq)
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/send_window/days/0"}, decodeAs[problem](t, res).pointers())
}
