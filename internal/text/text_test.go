package text_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/text"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	require.Empty(t, text.Check("café ☕ 𝄞"))
	require.Equal(t, text.ReasonNUL, text.Check("a\x00b"))
	require.Equal(t, text.ReasonUTF8, text.Check("caf\xe9"))
	require.Equal(t, text.ReasonUTF8, text.Check("\xed\xa0\x80")) // a surrogate encoded as UTF-8
}

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		doc  string
		want []text.Problem
	}{
		{`{"name":"café","n":1,"ok":[true,null,"\ud83d\ude00"]}`, nil},
		{`{"name":"a\u0000b"}`, []text.Problem{{"/name", text.ReasonNUL}}},
		{`{"name":"a\u0000b","x":"\ud800"}`, []text.Problem{{"/name", text.ReasonNUL}, {"/x", text.ReasonSurrogate}}},
		{`{"a":{"b":[1,"ok","\udc00"]}}`, []text.Problem{{"/a/b/2", text.ReasonSurrogate}}},
		{`{"a":"\ud800\u0041"}`, []text.Problem{{"/a", text.ReasonSurrogate}}},
		{"{\"a\":\"caf\xe9\"}", []text.Problem{{"/a", text.ReasonUTF8}}},
		{`{"attributes":{"k\u0000":"v"}}`, []text.Problem{{"/attributes/k\uFFFD", text.ReasonNUL}}},
		{`{"a/b~":"\u0000"}`, []text.Problem{{"/a~1b~0", text.ReasonNUL}}},
		{`"\u0000"`, []text.Problem{{"", text.ReasonNUL}}},
		{`[{"email":"x"},{"email":"\u0000"}]`, []text.Problem{{"/1/email", text.ReasonNUL}}},
		{`{"a":"\u00`, nil}, // a syntax error is the decoder's to report
		{`{"a":"\\u0000"}`, nil},
	} {
		got := text.CheckJSON([]byte(tc.doc))
		require.Equal(t, tc.want, got, tc.doc)
		for _, p := range got {
			_, err := json.Marshal(p.Pointer)
			require.NoError(t, err)
			require.True(t, text.Valid(p.Pointer), "pointer %q", p.Pointer)
		}
	}
}

// FuzzCheckJSON: whenever encoding/json accepts a document, CheckJSON either finds a
// problem or every string the decoder produced is storable as it was sent.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `["\u0000"]`, `{"\ud800":1}`, "\"\xff\"", `{"a":[{"b":"c"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		problems := text.CheckJSON(doc)
		var v any
		if json.Unmarshal(doc, &v) != nil || len(problems) > 0 {
			return
		}
		var walk func(any)
		walk = func(x any) {
			switch x := x.(type) {
			case string:
				if !text.Valid(x) {
					t.Fatalf("passed %q in %q", x, doc)
				}
			case []any:
				for _, y := range x {
					walk(y)
				}
			case map[string]any:
				for k, y := range x {
					walk(k)
					walk(y)
				}
			}
		}
		walk(v)
	})
}

// BenchmarkCheckJSON scans a 1 MiB body (the default body limit) of short strings
// and a 1 MiB body of one long string:
//
//	go test -run xxx -bench CheckJSON ./internal/text/
func BenchmarkCheckJSON(b *testing.B) {
	var many strings.Builder
	many.WriteString(`{"attributes":{`)
	for i := 0; many.Len() < 1<<20; i++ {
		fmt.Fprintf(&many, `"key%d":"Zoë value %d",`, i, i)
	}
	manyDoc := []byte(strings.TrimSuffix(many.String(), ",") + `}}`)
	oneDoc := []byte(`{"html_template":"` + strings.Repeat("<p>café</p>", (1<<20)/13) + `"}`)
	for name, doc := range map[string][]byte{"many-strings": manyDoc, "one-string": oneDoc} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if p := text.CheckJSON(doc); len(p) != 0 {
					b.Fatal(p)
				}
			}
		})
	}
}

// TestIsBidiControl: the one definition of a bidirectional formatting character is
// exactly these twelve code points — the marks included, which a hand-written list
// of the embeddings, overrides and isolates once missed.
func TestIsBidiControl(t *testing.T) {
	t.Parallel()
	want := map[rune]bool{0x061c: true, 0x200e: true, 0x200f: true, 0x2066: true, 0x2067: true, 0x2068: true, 0x2069: true}
	for r := rune(0x202a); r <= 0x202e; r++ {
		want[r] = true
	}
	for r := rune(0); r <= 0x10ffff; r++ {
		if text.IsBidiControl(r) != want[r] {
			t.Fatalf("IsBidiControl(%U) = %v", r, !want[r])
		}
	}
	require.True(t, text.HasBidiControl("invoice\u200fexe.pdf"))
	require.False(t, text.HasBidiControl("فاتورة.pdf"), "right-to-left letters are text, not controls")
}
