package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// problemServer answers every request with status and an RFC 9457 body as the
// service writes it.
func problemServer(t *testing.T, status int, body string) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(body, "{") {
			w.Header().Set("Content-Type", "application/problem+json")
		} else {
			w.Header().Set("Content-Type", "text/plain")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.Config{URL: srv.URL, APIKey: "k", MaxRetries: -1})
	require.NoError(t, err)
	return c
}

// A 422 whose one field error repeats the detail (the service's usual answer)
// prints the detail once, naming the field; the typed error carries the type,
// status, detail and fields.
func TestErrorPrintsTheDetailOnce(t *testing.T) {
	t.Parallel()
	c := problemServer(t, 422, `{"type":"https://sendonce.dev/problems/invalid","title":"Invalid request","status":422,`+
		`"detail":"unknown event type \"send.bogus\"","instance":"/v1/event-endpoints","request_id":"r1",`+
		`"errors":[{"pointer":"/event_types/0","detail":"unknown event type \"send.bogus\""}]}`)
	resp, err := c.ListEventEndpointsWithResponse(context.Background(), nil)
	err = client.Check(resp, err)
	require.Error(t, err)
	require.Equal(t, `sendonce: 422 unknown event type "send.bogus" (/event_types/0)`, err.Error())
	require.Equal(t, 1, strings.Count(err.Error(), "send.bogus"))

	var e *client.Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, 422, e.Status)
	require.Equal(t, "https://sendonce.dev/problems/invalid", e.Type)
	require.Equal(t, `unknown event type "send.bogus"`, e.Detail)
	require.Equal(t, map[string]string{"/event_types/0": `unknown event type "send.bogus"`}, e.Fields)
	require.Equal(t, "r1", e.RequestID)

	// Field errors that say more than the detail are listed with their fields.
	c = problemServer(t, 422, `{"type":"https://sendonce.dev/problems/invalid","title":"Invalid request","status":422,`+
		`"detail":"2 fields are invalid","errors":[{"pointer":"/email","detail":"not an address"},{"pointer":"/name","detail":"too long"}]}`)
	resp, err = c.ListEventEndpointsWithResponse(context.Background(), nil)
	require.Equal(t, "sendonce: 422 2 fields are invalid: /email: not an address; /name: too long", client.Check(resp, err).Error())

	// No problem body (a proxy's answer): the status text.
	c = problemServer(t, 502, `upstream connect error`)
	resp, err = c.ListEventEndpointsWithResponse(context.Background(), nil)
	require.Equal(t, "sendonce: 502 Bad Gateway", client.Check(resp, err).Error())
}
