package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// An anonymous single opt-in sign-up confirms only a subscriber the form itself
// created; one the tenant holds as pending (imported or created through the API,
// waiting for the tenant's own confirmation) stays pending, so a stranger who
// types the address into the form cannot put it into "every subscriber" campaigns.
// The query once confirmed any pending subscriber of the address.
func TestSignupKeepsTheTenantsPendingSubscriber(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	single := o.list(o.keyA, "Weekly", map[string]any{"public": true, "optin_from_email": "news@example.com"})
	res := o.do(o.keyA, "POST", "/v1/subscribers", map[string]any{"email": "held@example.com", "status": "pending"})
	require.Equal(t, http.StatusCreated, res.Status, string(res.Body))

	res = o.raw("POST", "/p/"+o.pubA+"/subscribe", `{"email":"held@example.com","list_ids":[`+itoa(single.Id)+`]}`,
		"198.51.100.1:1", "Content-Type", "application/json")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	status, _ := o.state("held@example.com", single.Id)
	require.Equal(t, "pending", status, "the tenant's pending subscriber is not confirmed by a stranger's sign-up")

	// A subscriber the form created is confirmed by its single opt-in sign-up.
	res = o.raw("POST", "/p/"+o.pubA+"/subscribe", `{"email":"new@example.com","list_ids":[`+itoa(single.Id)+`]}`,
		"198.51.100.1:1", "Content-Type", "application/json")
	require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	status, member := o.state("new@example.com", single.Id)
	require.Equal(t, []string{"confirmed", "subscribed"}, []string{status, member})
}
