package render

import (
	"strings"
	"testing"
)

// foldSubject's shortcut must give what strings.Fields + Join give.
func FuzzFoldSubject(f *testing.F) {
	for _, s := range []string{"Hello Ada", " lead", "trail ", "two  spaces", "new\nline", "tab\there", "nb\u00a0sp", "café", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := foldSubject(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("foldSubject(%q) = %q, want %q", s, got, want)
		}
	})
}
