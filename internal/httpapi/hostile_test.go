package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/api"
)

// The hostile walk is generated from openapi.yaml: every operation of the tenant API
// that takes a JSON body, query parameters or path parameters gets, in every string
// field of its body (member names of free-form objects included), every query
// parameter, every path parameter and the Idempotency-Key header, each of the values
// below, and must answer a 4xx problem+json — never a 5xx, never a success — and
// change nothing. Operations added to the spec are walked without a change here.

// sentinel marks the slot a hostile literal replaces in a marshalled body.
const sentinel = "HOSTILE-SENTINEL-7f3a"

// hostileLiteral is a raw JSON value put where a string belongs.
type hostileLiteral struct {
	name, lit string
	// textOnly is true for the values that are wrong as text; the others are wrong
	// types, which free-form values (attributes) legitimately accept.
	textOnly bool
}

var oneMB = strings.Repeat("x", 1<<20)

var hostileLiterals = []hostileLiteral{
	{"escaped NUL", `"a\u0000b"`, true},
	{"raw NUL", "\"a\x00b\"", true},
	{"invalid UTF-8", "\"caf\xe9\"", true},
	{"UTF-8-encoded surrogate", "\"\xed\xa0\x80\"", true},
	{"lone high surrogate", `"\ud800"`, true},
	{"lone low surrogate", `"x\udc00y"`, true},
	{"reversed surrogate pair", `"\ude00\ud83d"`, true},
	{"1 MB string", `"` + oneMB + `"`, true},
	{"number", `12345`, false},
	{"object", `{"a":"b"}`, false},
	{"array", `["a"]`, false},
	{"boolean", `true`, false},
}

// hostileParams are query and path parameter values (already URL-encoded).
var hostileParams = []struct{ name, value string }{
	{"NUL", "%00"},
	{"NUL inside", "a%00b"},
	{"invalid UTF-8", "caf%E9"},
	{"UTF-8-encoded surrogate", "%ED%A0%80"},
	{"1 MB", oneMB},
	{"not a number", "abc"},
	{"out of range", "99999999999999999999"},
	{"negative", "-1"},
}

// slot is one place in a body a hostile value goes.
type slot struct {
	path []any // object keys (string) and array indices (int)
	// key: the slot is the name of a member of a free-form object.
	key bool
	// free: the value of a free-form member (any JSON type is valid there).
	free bool
}

// attachmentContent reports whether the slot is a file's base64 content
// (attachments/i/content), where a long string is legitimate.
func attachmentContent(s slot) bool {
	n := len(s.path)
	return n >= 3 && s.path[n-1] == "content" && s.path[n-3] == "attachments"
}

func (s slot) String() string {
	var b strings.Builder
	for _, p := range s.path {
		fmt.Fprintf(&b, "/%v", p)
	}
	if s.key {
		b.WriteString(" (name)")
	}
	return b.String()
}

// fixtures are the ids the generated requests use, so requests reach their handlers.
type fixtures struct {
	subscriber, list, campaign, hook int64
	eventEndpoint                    int64
	suppressed                       string
}

func makeFixtures(t *testing.T, e *env) fixtures {
	t.Helper()
	var f fixtures
	res := e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "fx@example.com", "status": "confirmed"})
	require.Equal(t, http.StatusCreated, res.Status)
	f.subscriber = decodeAs[api.Subscriber](t, res).Id
	res = e.do(e.keyA, "POST", "/v1/lists", map[string]any{"name": "fx"})
	require.Equal(t, http.StatusCreated, res.Status)
	f.list = decodeAs[api.List](t, res).Id
	res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "fx", "subject": "Hi",
		"from_email": "news@example.com", "text_template": "Hello", "list_ids": []int64{f.list}})
	require.Equal(t, http.StatusCreated, res.Status)
	f.campaign = decodeAs[api.Campaign](t, res).Id
	res = e.do(e.keyA, "POST", "/v1/webhook-endpoints", map[string]any{"source": "standard", "name": "fx"})
	require.Equal(t, http.StatusCreated, res.Status)
	f.hook = int64(decodeAs[map[string]any](t, res)["id"].(float64))
	res = e.do(e.keyA, "POST", "/v1/event-endpoints", map[string]any{"url": "https://example.com/fx"})
	require.Equal(t, http.StatusCreated, res.Status)
	f.eventEndpoint = int64(decodeAs[map[string]any](t, res)["id"].(float64))
	f.suppressed = "gone@example.com"
	res = e.do(e.keyA, "POST", "/v1/suppressions", map[string]any{"email": f.suppressed})
	require.Equal(t, http.StatusCreated, res.Status)
	return f
}

// pathFor fills the path parameters of a spec path with the fixtures.
func (f fixtures) pathFor(path string) string {
	r := strings.NewReplacer("{email}", f.suppressed)
	for prefix, id := range map[string]int64{"/v1/subscribers/": f.subscriber, "/v1/lists/": f.list,
		"/v1/campaigns/": f.campaign, "/v1/webhook-endpoints/": f.hook, "/v1/event-endpoints/": f.eventEndpoint} {
		if strings.HasPrefix(path, prefix) {
			return strings.Replace(r.Replace(path), "{id}", itoa(id), 1)
		}
	}
	return r.Replace(path)
}

// sample builds a value that satisfies s as far as a generator can (fixture ids
// for id lists, addresses for address fields), and records every string slot. With
// focus nil every property is there; otherwise only the required ones and those on
// the path focus (so optional fields that exclude each other do not spoil the base).
func (f fixtures) sample(s *openapi3.Schema, name string, at []any, slots *[]slot, focus ...[]any) any {
	var fc []any
	if len(focus) > 0 {
		fc = focus[0]
	}
	if len(s.AllOf) > 0 {
		return f.sample(s.AllOf[0].Value, name, at, slots, focus...)
	}
	if len(s.Enum) > 0 {
		if s.Type.Is("string") {
			*slots = append(*slots, slot{path: at})
		}
		return s.Enum[0]
	}
	switch {
	case s.Type.Is("object"):
		m := map[string]any{}
		if len(s.Properties) == 0 {
			// Free-form (attributes): one member whose name and value are both slots.
			m["plan"] = "pro"
			*slots = append(*slots, slot{path: append(clone(at), "plan"), free: true}, slot{path: append(clone(at), "plan"), key: true})
			return m
		}
		for _, k := range sortedProps(s) {
			onPath := len(fc) > len(at) && fc[len(at)] == k
			if len(focus) > 0 && !slices.Contains(s.Required, k) && !onPath {
				continue
			}
			m[k] = f.sample(s.Properties[k].Value, k, append(clone(at), k), slots, focus...)
		}
		return m
	case s.Type.Is("array"):
		return []any{f.sample(s.Items.Value, strings.TrimSuffix(name, "s"), append(clone(at), 0), slots, focus...)}
	case s.Type.Is("integer"):
		switch name {
		case "list_id":
			return f.list
		case "subscriber_id":
			return f.subscriber
		}
		if s.Min != nil {
			return int64(*s.Min) + 1
		}
		return 60
	case s.Type.Is("boolean"):
		return true
	case s.Type.Is("string"):
		*slots = append(*slots, slot{path: at})
		switch {
		case s.Format == "date-time":
			return time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		case strings.Contains(name, "email") || name == "reply_to":
			return "ok@example.com"
		case name == "secret":
			return "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
		}
		return "text"
	}
	return nil
}

func clone(at []any) []any { return append([]any(nil), at...) }

func sortedProps(s *openapi3.Schema) []string {
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// place puts v at the slot's path in a deep copy of base (a member name is
// replaced by v when key is set).
func place(base any, sl slot, v any) any {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(base)
	var doc any
	_ = json.Unmarshal(b.Bytes(), &doc)
	if len(sl.path) == 0 {
		return v
	}
	parent := doc
	for _, p := range sl.path[:len(sl.path)-1] {
		switch p := p.(type) {
		case string:
			parent = parent.(map[string]any)[p]
		case int:
			parent = parent.([]any)[p]
		}
	}
	switch last := sl.path[len(sl.path)-1].(type) {
	case string:
		m := parent.(map[string]any)
		if sl.key {
			m[v.(string)] = m[last]
			delete(m, last)
		} else {
			m[last] = v
		}
	case int:
		parent.([]any)[last] = v
	}
	return doc
}

// hostileBody is base with lit in the slot, as raw bytes (lit may be anything).
func hostileBody(t *testing.T, base any, sl slot, lit string) []byte {
	doc := place(base, sl, sentinel)
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	if sl.key {
		require.True(t, strings.HasPrefix(lit, `"`), "member names are strings")
	}
	return bytes.Replace(raw, []byte(`"`+sentinel+`"`), []byte(lit), 1)
}

// send performs a request on the handler with raw parts (target may hold anything
// url.Parse accepts once escaped).
func send(e *env, method, target string, body []byte, headers ...string) response {
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req := httptest.NewRequest(method, "/", nil)
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	req.URL, req.RequestURI = u, target
	if rd != nil {
		req.Body, req.ContentLength = io.NopCloser(rd), int64(rd.Len())
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header[http.CanonicalHeaderKey(headers[i])] = []string{headers[i+1]}
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	return response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// requireProblem4xx: a 4xx whose body is a problem with the same status.
func requireProblem4xx(t *testing.T, res response, what string) {
	t.Helper()
	require.True(t, res.Status >= 400 && res.Status < 500, "%s: answered %d: %.300s", what, res.Status, res.Body)
	require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"), what)
	var p problem
	require.NoError(t, json.Unmarshal(res.Body, &p), "%s: %.300s", what, res.Body)
	require.Equal(t, res.Status, p.Status, what)
}

// tableCounts is what the walk must leave as it found it.
func tableCounts(t *testing.T, e *env) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"subscribers", "lists", "list_members", "campaigns", "suppressions", "webhook_endpoints", "sends"} {
		var n int
		require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT count(*) FROM `+table).Scan(&n))
		out[table] = n
	}
	var fp string
	require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT md5(string_agg(s::text, ',' ORDER BY id)) FROM subscribers s`).Scan(&fp))
	out["subscribers:"+fp] = 1
	require.NoError(t, e.pool.QueryRow(t.Context(), `SELECT md5(string_agg(c::text, ',' ORDER BY id)) FROM campaigns c`).Scan(&fp))
	out["campaigns:"+fp] = 1
	return out
}

// operation is one walked operation of openapi.yaml.
type operation struct {
	method, path string
	op           *openapi3.Operation
	params       openapi3.Parameters
}

func walkedOperations(t *testing.T) []operation {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(sendonce.OpenAPI)
	require.NoError(t, err)
	var ops []operation
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		// The tenant API; the unauthenticated routes have their own walks.
		if !strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v1/webhooks/") {
			continue
		}
		// A valid request to the event stream never ends; TestEventStreamHostileParameters
		// walks its parameters.
		if path == "/v1/events/stream" {
			continue
		}
		for method, op := range item.Operations() {
			params := append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...)
			ops = append(ops, operation{method: method, path: path, op: op, params: params})
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].method+ops[i].path < ops[j].method+ops[j].path })
	return ops
}

// jsonBodySchema is the operation's JSON body schema, or nil.
func jsonBodySchema(op *openapi3.Operation) *openapi3.Schema {
	if op.RequestBody == nil || op.RequestBody.Value == nil {
		return nil
	}
	mt := op.RequestBody.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}

// TestHostileInputGenerated is the walk. It first sends every operation its
// generated base request on a separate database (a survey: never a 5xx, and it says
// how many reach their handler with a valid body), then the hostile variants.
func TestHostileInputGenerated(t *testing.T) {
	t.Parallel()
	ops := walkedOperations(t)

	survey := setup(t)
	sf := makeFixtures(t, survey)
	accepted := 0
	// Deletions last, so the other operations find the fixtures.
	surveyed := append([]operation(nil), ops...)
	sort.SliceStable(surveyed, func(i, j int) bool {
		return surveyed[i].method != http.MethodDelete && surveyed[j].method == http.MethodDelete
	})
	for _, o := range surveyed {
		if o.path == "/v1/subscribers/import" {
			continue // its body is CSV or an array; TestHostileImports walks it
		}
		var body []byte
		if s := jsonBodySchema(o.op); s != nil {
			var slots []slot
			body, _ = json.Marshal(sf.sample(s, "", nil, &slots, []any{}))
		}
		res := send(survey, o.method, sf.pathFor(o.path), body)
		require.Less(t, res.Status, 500, "%s %s base: %s", o.method, o.path, res.Body)
		if res.Status < 300 {
			accepted++
		} else {
			t.Logf("base %s %s: %d %.200s", o.method, o.path, res.Status, res.Body)
		}
	}
	t.Logf("generated base requests accepted: %d of %d operations", accepted, len(ops))

	e := setup(t)
	f := makeFixtures(t, e)
	before := tableCounts(t, e)
	sent := 0
	for _, o := range ops {
		target := f.pathFor(o.path)
		// Body slots.
		if s := jsonBodySchema(o.op); s != nil && o.path != "/v1/subscribers/import" {
			var slots []slot
			f.sample(s, "", nil, &slots)
			for _, sl := range slots {
				var ignored []slot
				base := f.sample(s, "", nil, &ignored, sl.path)
				for _, h := range hostileLiterals {
					if (sl.key || sl.free) && !h.textOnly {
						continue
					}
					if sl.key && !strings.HasPrefix(h.lit, `"`) {
						continue
					}
					if h.name == "1 MB string" && attachmentContent(sl) {
						continue // 1 MB of "x" is valid base64: a 768 KiB file, within the 10 MB a message may carry
					}
					what := fmt.Sprintf("%s %s %s = %s", o.method, o.path, sl, h.name)
					res := send(e, o.method, target, hostileBody(t, base, sl, h.lit))
					sent++
					requireProblem4xx(t, res, what)
				}
			}
			// The body as a whole: wrong media type, broken JSON, wrong shape.
			for _, v := range []struct {
				name string
				body []byte
				ct   string
			}{{"text/plain", []byte(`{}`), "text/plain"}, {"no Content-Type", []byte(`{}`), ""},
				{"truncated", []byte(`{"a":`), "application/json"}, {"array", []byte(`[]`), "application/json"},
				{"NUL byte", []byte("\x00"), "application/json"}, {"invalid UTF-8 outside strings", []byte("{\xff}"), "application/json"},
				{"two documents", []byte(`{} {}`), "application/json"}} {
				res := send(e, o.method, target, v.body, "Content-Type", v.ct)
				sent++
				requireProblem4xx(t, res, fmt.Sprintf("%s %s body %s", o.method, o.path, v.name))
			}
		}
		// Query and path parameters.
		for _, pr := range o.params {
			p := pr.Value
			for _, h := range hostileParams {
				if h.name == "negative" && p.In == "query" {
					continue // a filter on an id nothing has is an empty page
				}
				if (h.name == "not a number" || h.name == "negative" || h.name == "out of range") && p.Schema != nil && p.Schema.Value.Type.Is("string") && len(p.Schema.Value.Enum) == 0 {
					continue // a valid string (an email prefix, say)
				}
				var url string
				switch p.In {
				case "query":
					url = target + "?" + p.Name + "=" + h.value
				case "path":
					url = strings.Replace(o.path, "{"+p.Name+"}", h.value, 1)
					url = f.pathFor(url)
				default:
					continue
				}
				res := send(e, o.method, url, nil)
				sent++
				requireProblem4xx(t, res, fmt.Sprintf("%s %s %s %s = %s", o.method, o.path, p.In, p.Name, h.name))
			}
		}
		// The one header used as data. The public sign-in routes (security: [])
		// take no Idempotency-Key: it is not read there.
		if public := o.op.Security != nil && len(*o.op.Security) == 0; o.method == http.MethodPost && !public {
			var body []byte
			if s := jsonBodySchema(o.op); s != nil {
				var slots []slot
				body, _ = json.Marshal(f.sample(s, "", nil, &slots))
			}
			for _, key := range []string{"a\x00b", "caf\xe9", "\xed\xa0\x80", oneMB} {
				res := send(e, o.method, target, body, "Idempotency-Key", key)
				sent++
				requireProblem4xx(t, res, fmt.Sprintf("%s %s Idempotency-Key %.12q", o.method, o.path, key))
			}
		}
	}
	t.Logf("hostile requests: %d over %d operations", sent, len(ops))

	require.Equal(t, before, tableCounts(t, e), "the hostile walk changed data")
	res := e.do(e.keyA, "GET", "/v1/lists", nil)
	require.Equal(t, http.StatusOK, res.Status, "still serving")
	res = e.do(e.keyA, "GET", "/v1/subscribers/"+itoa(f.subscriber), nil)
	require.Equal(t, http.StatusOK, res.Status, "still serving")
}
