package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
)

// TestSequencesAPI: the routes answer as openapi.yaml says: 422 naming the field
// (nothing stored), the state machine's 409s with current_status, enroll once,
// /track idempotent by event_id, and the timeline of one address.
func TestSequencesAPI(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.keyA
	res := e.do(a, "POST", "/v1/templates", map[string]any{"name": "w", "subject": "Welcome", "text": "Hi"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	tpl := decodeAs[api.Template](t, res)
	res = e.do(a, "POST", "/v1/subscribers", map[string]any{"email": "ada@example.com", "status": "confirmed"})
	require.Equal(t, http.StatusCreated, res.Status)

	body := func(steps ...map[string]any) map[string]any {
		return map[string]any{"name": "welcome", "trigger": map[string]any{"type": "manual"}, "steps": steps}
	}
	send := map[string]any{"type": "send", "template_id": tpl.Id, "from_email": "hello@example.com"}
	for pointer, b := range map[string]map[string]any{
		"/steps/1/duration":   body(send, map[string]any{"type": "wait", "duration": "soon"}),
		"/steps/0/from_email": body(map[string]any{"type": "send", "template_id": tpl.Id, "from_email": "x"}),
		"/steps/0/if/clicked": body(map[string]any{"type": "condition", "if": map[string]any{"clicked": true}}),
		"/trigger/list_id":    {"name": "w", "trigger": map[string]any{"type": "list_joined"}, "steps": []any{send}},
	} {
		res = e.do(a, "POST", "/v1/sequences", b)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", pointer, res.Body)
		require.Contains(t, string(res.Body), `"pointer":"`+pointer+`"`)
	}
	res = e.do(a, "GET", "/v1/sequences", nil)
	require.JSONEq(t, `{"data":[],"next_cursor":null}`, string(res.Body))

	res = e.do(a, "POST", "/v1/sequences", body(send, map[string]any{"type": "wait", "duration": "3d", "at": "09:00"}, send))
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))
	seq := decodeAs[api.Sequence](t, res)
	require.Equal(t, api.SequenceStatus("draft"), seq.Status)
	id := itoa(seq.Id)
	res = e.do(a, "POST", "/v1/sequences/"+id+"/enroll", map[string]any{"email": "ada@example.com"})
	require.Equal(t, http.StatusConflict, res.Status, "a draft enrolls no one")
	res = e.do(a, "POST", "/v1/sequences/"+id+"/pause", nil)
	require.Equal(t, http.StatusConflict, res.Status)
	require.Contains(t, string(res.Body), `"current_status":"draft"`)
	res = e.do(a, "POST", "/v1/sequences/"+id+"/activate", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	res = e.do(a, "POST", "/v1/sequences/"+id+"/activate", nil)
	require.Equal(t, http.StatusConflict, res.Status)
	res = e.do(a, "DELETE", "/v1/sequences/"+id, nil)
	require.Equal(t, http.StatusConflict, res.Status, "a sequence that ran is archived, not deleted")

	res = e.do(a, "POST", "/v1/sequences/"+id+"/enroll", map[string]any{"email": "nobody@example.com"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)
	require.Contains(t, string(res.Body), `"pointer":"/email"`)
	res = e.do(a, "POST", "/v1/sequences/"+id+"/enroll", map[string]any{"email": "ADA@example.com"})
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	first := decodeAs[api.SequenceEnrollResult](t, res)
	require.True(t, first.Enrolled)
	res = e.do(a, "POST", "/v1/sequences/"+id+"/enroll", map[string]any{"email": "ada@example.com"})
	again := decodeAs[api.SequenceEnrollResult](t, res)
	require.False(t, again.Enrolled)
	require.Equal(t, first.EnrollmentId, again.EnrollmentId)

	res = e.do(a, "GET", "/v1/sequences/"+id+"/enrollments?email=ada@example.com", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	page := decodeAs[api.SequenceEnrollmentPage](t, res)
	require.Len(t, page.Data, 1)
	require.Equal(t, api.SequenceTimelineEntryOutcome("entered"), page.Data[0].Timeline[0].Outcome)
	res = e.do(a, "GET", "/v1/sequences/"+id+"/stats", nil)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))

	track := map[string]any{"event_id": "evt-9", "name": "anything", "email": "ada@example.com", "data": map[string]any{"x": 1}}
	res = e.do(a, "POST", "/v1/track", track)
	require.Equal(t, http.StatusOK, res.Status, string(res.Body))
	require.False(t, decodeAs[api.TrackResult](t, res).Replayed)
	res = e.do(a, "POST", "/v1/track", track)
	require.True(t, decodeAs[api.TrackResult](t, res).Replayed)
	res = e.do(a, "POST", "/v1/track", map[string]any{"event_id": "", "name": "x", "email": "ada@example.com"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status)

	res = e.do(a, "POST", "/v1/sequences/"+id+"/archive", nil)
	require.Equal(t, http.StatusOK, res.Status)
	res = e.do(a, "PUT", "/v1/sequences/"+id, body(send))
	require.Equal(t, http.StatusConflict, res.Status, "an archived sequence is not edited")
	res = e.do(a, "GET", "/v1/sequences/"+id+"/enrollments", nil)
	page = decodeAs[api.SequenceEnrollmentPage](t, res)
	require.Equal(t, "archived", *page.Data[0].ExitReason)
}
