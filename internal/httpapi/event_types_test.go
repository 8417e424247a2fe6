package httpapi_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/event"
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

// eventSpec is openapi.yaml, loaded once for the event schema checks.
var eventSpec = func() *openapi3.T {
	doc, err := openapi3.NewLoader().LoadFromData(sendonce.OpenAPI)
	if err != nil {
		panic(err)
	}
	return doc
}()

// TestEventCatalogue: the EventType enum of openapi.yaml is exactly the catalogue —
// every type docs/events.md lists, every event type constant of the Go code that
// emits events, every literal type the SQL writes, and event.Types (what endpoints
// and filters accept) — and every type has its member of the Event union, whose
// type is that one value and whose data is an object schema.
func TestEventCatalogue(t *testing.T) {
	t.Parallel()
	schemas := eventSpec.Components.Schemas
	var enum []string
	for _, v := range schemas["EventType"].Value.Enum {
		enum = append(enum, v.(string))
	}
	sort.Strings(enum)

	sorted := func(xs []string) []string {
		out := slices.Clone(xs)
		sort.Strings(out)
		return slices.Compact(out)
	}
	require.Equal(t, enum, sorted(event.Types), "event.Types (what endpoints and ?type= accept) and the EventType enum")

	// docs/events.md: the first cell of each catalogue row names the types, the
	// later ones of a row by their suffix ("`campaign.approved` / `paused`").
	md, err := os.ReadFile("../../docs/events.md")
	require.NoError(t, err)
	catalogue := string(md)[strings.Index(string(md), "### Catalogue"):]
	catalogue = catalogue[:strings.Index(catalogue, "\n### ")]
	var documented []string
	for _, line := range strings.Split(catalogue, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		prefix := ""
		for _, m := range regexp.MustCompile("`([a-z_.]+)`").FindAllStringSubmatch(cell, -1) {
			name := m[1]
			if p, _, ok := strings.Cut(name, "."); ok {
				prefix = p
			} else {
				name = prefix + "." + name
			}
			documented = append(documented, name)
		}
	}
	require.Equal(t, enum, sorted(documented), "docs/events.md's catalogue and the EventType enum")

	// The Go constants of the packages that emit events, and the SQL's literal types
	// (send.* are written as 'send.' || status, covered by event's constants).
	var emitted []string
	typeLit := regexp.MustCompile(`^"([a-z]+\.[a-z_]+)"$`)
	for _, file := range []string{"../event/event.go", "../sequence/advance.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && typeLit.MatchString(lit.Value) {
						emitted = append(emitted, typeLit.FindStringSubmatch(lit.Value)[1])
					}
				}
			}
			return true
		})
	}
	queries, err := filepath.Glob("../../db/queries/*.sql")
	require.NoError(t, err)
	for _, q := range queries {
		b, err := os.ReadFile(q)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`'((?:campaign|send|subscriber|suppression|endpoint|sender|sequence)\.[a-z_]+)'`).FindAllStringSubmatch(string(b), -1) {
			emitted = append(emitted, m[1])
		}
	}
	emitted = sorted(emitted)
	require.Subset(t, enum, emitted, "an emitted type missing from the EventType enum")
	require.Len(t, emitted, len(enum), "a type of the enum that no code emits: %v", emitted)

	// One union member per type.
	ev := schemas["Event"].Value
	require.NotNil(t, ev.Discriminator)
	require.Equal(t, "type", ev.Discriminator.PropertyName)
	require.Len(t, ev.OneOf, len(enum))
	for _, typ := range enum {
		ref, ok := ev.Discriminator.Mapping[typ]
		require.True(t, ok, "no discriminator mapping for %s", typ)
		member := schemas[strings.TrimPrefix(ref.Ref, "#/components/schemas/")]
		require.NotNil(t, member, "%s maps to %s, which is not a schema", typ, ref.Ref)
		require.Equal(t, []any{typ}, member.Value.Properties["type"].Value.Enum, "%s's member schema", typ)
		data := member.Value.Properties["data"].Value
		require.True(t, data.Type.Is("object"), "%s's data", typ)
		require.NotEmpty(t, data.Properties, "%s's data declares no field", typ)
	}
}

// checkEventPage holds every event of a GET /v1/events page to its type's schema
// more strictly than the response check does (the schemas leave room for fields a
// later release adds): each field of data must be declared by the payload schema of
// the event's type. checkResponse calls it, so every test that lists events checks
// the payloads the service really wrote.
func checkEventPage(t *testing.T, body []byte) {
	t.Helper()
	var page struct {
		Data []struct {
			Type string                     `json:"type"`
			Data map[string]json.RawMessage `json:"data"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &page))
	ev := eventSpec.Components.Schemas["Event"].Value
	for _, e := range page.Data {
		ref, ok := ev.Discriminator.Mapping[e.Type]
		require.True(t, ok, "event type %s has no schema", e.Type)
		member := eventSpec.Components.Schemas[strings.TrimPrefix(ref.Ref, "#/components/schemas/")].Value
		data := member.Properties["data"]
		for k := range e.Data {
			require.Contains(t, data.Value.Properties, k, "%s's data has %q, which %s does not declare", e.Type, k, data.Ref)
		}
	}
}
