package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dnscheck/dnschecktest"
)

// TestDKIMKeysRoute: keys are generated, listed, checked against DNS, rotated
// and deleted through the API, each write audited; bad input is a 422 naming the
// field and changes nothing.
func TestDKIMKeysRoute(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex // the zone changes during the test; the server reads it after onQuery
	zone := map[string][]string{"news.example.com.": {"v=spf1 -all"}}
	addr := dnschecktest.Serve(t, zone, func(string) { mu.Lock(); mu.Unlock() }) //nolint:staticcheck // an empty critical section orders the reads after the writes
	publish := func(name, value string) {
		mu.Lock()
		defer mu.Unlock()
		var parts []string
		for len(value) > 255 {
			parts, value = append(parts, value[:255]), value[255:]
		}
		zone[name+"."] = []string{strings.Join(append(parts, value), "|")}
	}
	e := setup(t, func(c *config.Config) { c.DNSServer = addr })
	base := "/v1/domains/News.Example.com/dkim-keys"

	for _, bad := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{base, map[string]any{"selector": "bad_selector"}, "/selector"},
		{base, map[string]any{"selector": "-lead"}, "/selector"},
		{base, map[string]any{"selector": "two.labels"}, "/selector"},
		{base, map[string]any{"algorithm": "dsa"}, "/algorithm"},
		{"/v1/domains/localhost/dkim-keys", map[string]any{}, "/domain"},
	} {
		res := e.do(e.keyA, http.MethodPost, bad.path, bad.body)
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%v: %s", bad.body, res.Body)
		require.Contains(t, string(res.Body), bad.field, "%v", bad.body)
	}
	res := e.do(e.keyA, http.MethodGet, base, nil)
	require.JSONEq(t, `{"data":[]}`, string(res.Body), "nothing was stored")

	res = e.do(e.keyA, http.MethodPost, base, map[string]any{"selector": "S1", "algorithm": "ed25519"})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	k1 := decodeAs[api.DkimKey](t, res)
	require.Equal(t, "s1", k1.Selector)
	require.Equal(t, "news.example.com", k1.Domain)
	require.False(t, k1.Active)
	require.Equal(t, "s1._domainkey.news.example.com", k1.Record.Name)
	require.True(t, strings.HasPrefix(k1.Record.Value, "v=DKIM1; k=ed25519; p="), k1.Record.Value)
	require.NotContains(t, strings.ToLower(string(res.Body)), "private")
	res = e.do(e.keyA, http.MethodPost, base, map[string]any{"selector": "s1"})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "a selector is unique per domain: %s", res.Body)
	require.Contains(t, string(res.Body), "/selector")
	res = e.do(e.keyA, http.MethodPost, base, map[string]any{})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	k2 := decodeAs[api.DkimKey](t, res)
	require.Equal(t, api.DkimKeyAlgorithm("rsa-2048"), k2.Algorithm)
	require.Regexp(t, `^so\d{8}-[0-9a-f]{6}$`, k2.Selector)

	check := func() api.DomainCheck {
		t.Helper()
		res := e.do(e.keyA, http.MethodPost, "/v1/domains/check", map[string]any{"domain": "news.example.com"})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		return decodeAs[api.DomainCheck](t, res)
	}
	statuses := func(c api.DomainCheck) map[string]string {
		out := map[string]string{}
		for _, k := range c.DkimKeys {
			out[k.Selector] = string(k.Status)
		}
		return out
	}
	require.Equal(t, map[string]string{"s1": "missing", k2.Selector: "missing"}, statuses(check()))
	publish(k1.Record.Name, k2.Record.Value) // the wrong key at s1
	publish(k2.Record.Name, k2.Record.Value)
	require.Equal(t, map[string]string{"s1": "mismatch", k2.Selector: "match"}, statuses(check()))
	publish(k1.Record.Name, k1.Record.Value)
	require.Equal(t, map[string]string{"s1": "match", k2.Selector: "match"}, statuses(check()))

	// Activation: the DKIM check then looks at the active key's selector.
	res = e.do(e.keyA, http.MethodPost, fmt.Sprintf("%s/%d/activate", base, k1.Id), nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.True(t, decodeAs[api.DkimKey](t, res).Active)
	c := check()
	require.Equal(t, "s1", *c.Dkim.Selector)
	require.Equal(t, api.DomainRecordCheckStatus("pass"), c.Dkim.Status)

	res = e.do(e.keyA, http.MethodDelete, fmt.Sprintf("%s/%d", base, k1.Id), nil)
	require.Equal(t, http.StatusConflict, res.Status, "the active key cannot be deleted: %s", res.Body)
	// Rotation: k2 signs, k1 stays until deleted.
	res = e.do(e.keyA, http.MethodPost, fmt.Sprintf("%s/%d/activate", base, k2.Id), nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	list := decodeAs[api.DkimKeyList](t, e.do(e.keyA, http.MethodGet, base, nil))
	require.Len(t, list.Data, 2)
	require.False(t, list.Data[0].Active)
	require.True(t, list.Data[1].Active)
	res = e.do(e.keyA, http.MethodDelete, fmt.Sprintf("%s/%d", base, k1.Id), nil)
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
	res = e.do(e.keyA, http.MethodDelete, fmt.Sprintf("%s/%d", base, k1.Id), nil)
	require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	res = e.do(e.keyA, http.MethodPost, fmt.Sprintf("/v1/domains/other.example.com/dkim-keys/%d/activate", k2.Id), nil)
	require.Equal(t, http.StatusNotFound, res.Status, "a key is named under its own domain: %s", res.Body)

	// Every write is audited, with the key as target.
	for action, n := range map[string]int{"dkim_key.create": 2, "dkim_key.activate": 2, "dkim_key.delete": 1} {
		page := decodeAs[api.AuditEntryPage](t, e.do(e.keyA, http.MethodGet, "/v1/audit-log?action="+action, nil))
		require.Len(t, page.Data, n, action)
		for _, en := range page.Data {
			require.Equal(t, "dkim_key", en.TargetType)
			require.NotNil(t, en.TargetId, action)
			require.True(t, en.InChangeTx, action)
		}
	}
}
