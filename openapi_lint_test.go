package sendonce

import (
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// The lints below hold openapi.yaml to what generators and linters expect of it
// (Redocly, Spectral's oas ruleset, openapi-typescript, openapi-to-postman), so a
// route added without them fails here rather than in someone's generated client.

func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	require.NoError(t, err)
	return doc
}

// TestOpenAPIOperationsDocumented: every operation has a tag that the document
// declares (the rendered reference and the SDKs group by them), a short summary
// and a description.
func TestOpenAPIOperationsDocumented(t *testing.T) {
	t.Parallel()
	doc := loadSpec(t)
	declared := map[string]bool{}
	for _, tag := range doc.Tags {
		require.NotEmpty(t, tag.Description, "tag %s has no description", tag.Name)
		declared[tag.Name] = true
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			require.NotEmpty(t, op.Tags, "%s has no tags", name)
			for _, tag := range op.Tags {
				require.True(t, declared[tag], "%s: tag %q is not declared in the document's tags", name, tag)
			}
			require.NotEmpty(t, strings.TrimSpace(op.Summary), "%s has no summary", name)
			require.NotEmpty(t, strings.TrimSpace(op.Description), "%s has no description", name)
		}
	}
}

// walkSchemas calls fn on every schema of the document once, with a path for messages:
// the components and the inline schemas of parameters, request bodies and responses.
func walkSchemas(doc *openapi3.T, fn func(where string, s *openapi3.Schema, request bool)) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(where string, ref *openapi3.SchemaRef, request bool)
	walk = func(where string, ref *openapi3.SchemaRef, request bool) {
		if ref == nil || ref.Value == nil {
			return
		}
		s := ref.Value
		key := s
		if seen[key] && !request {
			return
		}
		seen[key] = true
		fn(where, s, request)
		for name, p := range s.Properties {
			walk(where+".properties."+name, p, request)
		}
		walk(where+".items", s.Items, request)
		for i, group := range [][]*openapi3.SchemaRef{s.AllOf, s.OneOf, s.AnyOf} {
			for j, sub := range group {
				walk(where+"."+[]string{"allOf", "oneOf", "anyOf"}[i]+"["+string(rune('0'+j))+"]", sub, request)
			}
		}
		if s.AdditionalProperties.Schema != nil {
			walk(where+".additionalProperties", s.AdditionalProperties.Schema, request)
		}
	}
	for name, s := range doc.Components.Schemas {
		walk("components.schemas."+name, s, false)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					walk(name+" request "+ct, mt.Schema, true)
				}
			}
			for code, resp := range op.Responses.Map() {
				if resp.Value == nil {
					continue
				}
				for ct, mt := range resp.Value.Content {
					walk(name+" "+code+" "+ct, mt.Schema, false)
				}
			}
		}
	}
}

// TestOpenAPISchemasTyped: `nullable` needs a sibling `type` in OpenAPI 3.0
// (Redocly's nullable-type-sibling, an error; Spectral then cannot check the
// examples that use the schema).
func TestOpenAPISchemasTyped(t *testing.T) {
	t.Parallel()
	walkSchemas(loadSpec(t), func(where string, s *openapi3.Schema, _ bool) {
		if s.Nullable {
			require.NotNil(t, s.Type, "%s: nullable without type", where)
			require.NotEmpty(t, s.Type.Slice(), "%s: nullable without type", where)
		}
	})
}

// TestOpenAPIRequestDefaults: no property of a request body carries `default`.
// openapi-typescript turns a defaulted property into a required one, so the
// simplest call (a subscriber without a status) would not compile; the default is
// the server's and is said in the description instead.
func TestOpenAPIRequestDefaults(t *testing.T) {
	t.Parallel()
	walkSchemas(loadSpec(t), func(where string, s *openapi3.Schema, request bool) {
		if request {
			require.Nil(t, s.Default, "%s: a request property with a default (say it in the description)", where)
		}
	})
}

// TestOpenAPIExamples: what a generated collection sends is what the spec shows,
// so it has to be something the server accepts: every query parameter has an
// example, every request body an example, and schema examples validate against
// their schemas (TestOpenAPIValid checks that last part with kin-openapi; Spectral
// also reads an example object with `type` and `default` keys as a schema, so an
// example must not carry both).
func TestOpenAPIExamples(t *testing.T) {
	t.Parallel()
	doc := loadSpec(t)
	var missing []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := method + " " + path
			params := append(openapi3.Parameters{}, item.Parameters...)
			params = append(params, op.Parameters...)
			for _, p := range params {
				// A signed token cannot have an example that works: it is minted by the server.
				if p.Value.In != "query" && p.Value.In != "path" || p.Value.Name == "token" {
					continue
				}
				s := p.Value.Schema.Value
				hasEnum := s != nil && (len(s.Enum) > 0 || (s.Items != nil && s.Items.Value != nil && len(s.Items.Value.Enum) > 0))
				if p.Value.Example == nil && len(p.Value.Examples) == 0 && !hasEnum {
					missing = append(missing, name+": parameter "+p.Value.Name)
				}
			}
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for ct, mt := range op.RequestBody.Value.Content {
				if !strings.Contains(ct, "json") {
					continue
				}
				has := mt.Example != nil || len(mt.Examples) > 0
				if !has && mt.Schema != nil && mt.Schema.Value != nil {
					has = mt.Schema.Value.Example != nil
				}
				// A body whose properties are all optional is sent as {} when it has no example.
				if !has && mt.Schema != nil && mt.Schema.Value != nil && len(mt.Schema.Value.Required) == 0 && mt.Schema.Value.MinProps == 0 {
					has = true
				}
				if !has {
					missing = append(missing, name+": request body "+ct)
				}
			}
		}
	}
	slices.Sort(missing)
	require.Empty(t, missing, "without an example")
	for name, s := range doc.Components.Schemas {
		if ex, ok := s.Value.Example.(map[string]any); ok {
			_, hasType := ex["type"]
			_, hasDefault := ex["default"]
			require.False(t, hasType && hasDefault, "components.schemas.%s: example with both type and default keys reads as a schema to Spectral", name)
		}
	}
}

// TestOpenAPIRequestIDsPositive: ids are ≥ 1, so every integer id a request body
// carries (a property named id or *_id, the items of one named ids or *_ids) says
// `minimum: 1`, and the request validator refuses 0 and negatives with a 422
// naming the field — one rule, checked where every body is checked. A field that
// can be cleared takes null for it, never 0.
func TestOpenAPIRequestIDsPositive(t *testing.T) {
	t.Parallel()
	var bad []string
	walkSchemas(loadSpec(t), func(where string, s *openapi3.Schema, request bool) {
		if !request || s.Type == nil || !s.Type.Is("integer") {
			return
		}
		i := strings.LastIndex(where, ".properties.")
		if i < 0 {
			return
		}
		name, items := strings.CutSuffix(where[i+len(".properties."):], ".items")
		if strings.Contains(name, ".") {
			return
		}
		isID := name == "id" || strings.HasSuffix(name, "_id")
		if items {
			isID = name == "ids" || strings.HasSuffix(name, "_ids")
		}
		if isID && (s.Min == nil || *s.Min < 1) {
			bad = append(bad, where)
		}
	})
	slices.Sort(bad)
	require.Empty(t, slices.Compact(bad), "request ids without minimum: 1")
}
