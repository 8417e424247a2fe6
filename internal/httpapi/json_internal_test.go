package httpapi

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPointerAt: the pointer of a value encoding/json refuses names every array
// index on its way, whatever the value (number out of range, wrong scalar, wrong
// container) and however the document is spaced.
func TestPointerAt(t *testing.T) {
	t.Parallel()
	type step struct {
		TemplateID int64 `json:"template_id"`
		Name       string
		If         map[string]int
	}
	type body struct {
		Steps [][]step         `json:"steps"`
		Tags  map[string][]int `json:"tags"`
	}
	for doc, want := range map[string]string{
		`{"steps":[[{"template_id":1}],[{"template_id":2},{"template_id":9223372036854775808}]]}`: "/steps/1/1/template_id",
		`{ "steps" : [ [ { "template_id" : 1.5 } ] ] }`:                                           "/steps/0/0/template_id",
		`{"steps":[[{"Name":"a","If":{"x":1}},{"Name":7}]]}`:                                      "/steps/0/1/Name",
		`{"steps":[[{"If":[]}]]}`:                                                                 "/steps/0/0/If",
		`{"tags":{"a/b~":[1,"x"]}}`:                                                               "/tags/a~1b~0/1",
	} {
		var v body
		err := json.Unmarshal([]byte(doc), &v)
		var typeErr *json.UnmarshalTypeError
		require.True(t, errors.As(err, &typeErr), "%s: %v", doc, err)
		got, ok := pointerAt([]byte(doc), typeErr.Offset)
		require.True(t, ok, doc)
		require.Equal(t, want, got, doc)
	}
}
