package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	contract "github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/client"
)

// delivery is one POST a test receiver got.
type delivery struct {
	header http.Header
	body   []byte
}

// receiver records what it is sent and answers status.
func receiver(t *testing.T, status int) (*httptest.Server, <-chan delivery) {
	t.Helper()
	got := make(chan delivery, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), body}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// events trigger sends, for every type of openapi.yaml's EventType enum, one
// event that a receiver verifies with the SDK (the Standard Webhooks signature of
// real deliveries), that validates against the type's member of the Event union
// (required fields, types, enums; no data field the schema does not declare), and
// whose Payload is the SDK's typed event of that type.
func TestCLIEventsTriggerEveryType(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(contract.OpenAPI)
	require.NoError(t, err)
	schemas := doc.Components.Schemas
	var enum []string
	for _, v := range schemas["EventType"].Value.Enum {
		enum = append(enum, v.(string))
	}
	slices.Sort(enum)
	require.Equal(t, enum, eventTypes(), "events trigger knows exactly the catalogue")

	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	recv, got := receiver(t, http.StatusNoContent)
	union := schemas["Event"].Value
	for _, typ := range enum {
		r := sendonce(t, nil, "", "events", "trigger", typ, "--to", recv.URL, "--secret", secret)
		require.Equal(t, 0, r.code, "%s: %s", typ, r.stderr)
		d := <-got
		require.Contains(t, r.stdout, typ)
		require.Contains(t, r.stdout, d.header.Get("webhook-id")+" -> 204")
		require.Equal(t, "application/json", d.header.Get("Content-Type"))

		evs, err := client.Verify(d.header, d.body, time.Now(), secret)
		require.NoError(t, err, "%s: the signature verifies", typ)
		require.Len(t, evs, 1)
		require.Equal(t, client.EventType(typ), evs[0].Type)
		require.True(t, strings.HasPrefix(evs[0].Id, "evt_test_"), evs[0].Id)
		require.Equal(t, d.header.Get("webhook-id"), evs[0].Id)

		var value map[string]any
		require.NoError(t, json.Unmarshal(d.body, &value))
		require.NoError(t, union.VisitJSON(value), "%s validates as an Event: %s", typ, d.body)
		ref := strings.TrimPrefix(union.Discriminator.Mapping[typ].Ref, "#/components/schemas/")
		member := schemas[ref].Value
		require.NoError(t, member.VisitJSON(value), "%s validates as %s: %s", typ, ref, d.body)
		data := member.Properties["data"].Value
		for k := range value["data"].(map[string]any) {
			require.Contains(t, data.Properties, k, "%s's data has %q, which %s does not declare", typ, k, ref)
		}
		for _, k := range data.Required {
			require.Contains(t, value["data"], k, "%s's data lacks required %q", typ, k)
		}

		p, err := evs[0].Payload()
		require.NoError(t, err)
		require.Equal(t, ref, reflect.TypeOf(p).Name(), "%s's Payload is the SDK's typed event", typ)
	}
}

// Mistakes are usage errors (exit 2) that say what is wrong, nothing sent; a
// receiver that refuses the event (here: a bad signature) is exit 1 with its
// status; --json prints the event as sent.
func TestCLIEventsTriggerErrors(t *testing.T) {
	t.Parallel()
	recv, got := receiver(t, http.StatusUnauthorized)

	r := sendonce(t, nil, "", "events", "trigger", "send.bogus", "--to", recv.URL)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, `"send.bogus" is not an event type`)
	require.Contains(t, r.stderr, "send.failed", "the valid types are listed")

	r = sendonce(t, nil, "", "events", "trigger", "send.failed")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "--to URL")

	r = sendonce(t, nil, "", "events", "trigger", "send.failed", "--to", recv.URL, "--secret", "hunter2")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "whsec_")
	require.Empty(t, got, "nothing was sent")

	r = sendonce(t, nil, "", "events", "trigger", "send.failed", "--to", recv.URL, "--json")
	require.Equal(t, ExitError, r.code, r.stderr)
	require.Contains(t, r.stderr, "the receiver answered 401 Unauthorized")
	require.Contains(t, r.stderr, "the signing secret is whsec_", "a made secret is printed")
	d := <-got
	var out struct {
		Status int             `json:"status"`
		Event  json.RawMessage `json:"event"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.Equal(t, http.StatusUnauthorized, out.Status)
	require.JSONEq(t, string(d.body), string(out.Event), "--json prints the body as sent")
}
