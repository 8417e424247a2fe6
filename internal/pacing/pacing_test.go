package pacing

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGroupOf(t *testing.T) {
	t.Parallel()
	for email, want := range map[string]string{"a@gmail.com": "gmail", "b@GoogleMail.com": "gmail",
		"c@hotmail.com": "microsoft", "d@aol.com": "yahoo", "e@example.org": "example.org", "f@Example.ORG.": "example.org"} {
		require.Equal(t, want, GroupOf(email), email)
	}
	require.Equal(t, "gmail", DomainLimit{Domain: "googlemail.com"}.Key())
}

// TestCapOn: day 0 is the start's UTC day, the day before it has day 0's cap,
// and after the last day there is no cap.
func TestCapOn(t *testing.T) {
	t.Parallel()
	w := Warmup{Caps: []int{5, 20}, Start: "2030-01-01"}
	at := func(s string) time.Time { v, err := time.Parse(time.RFC3339, s); require.NoError(t, err); return v }
	for _, c := range []struct {
		at       string
		cap, day int
		ok       bool
	}{
		{"2029-12-31T12:00:00Z", 5, 0, true},
		{"2030-01-01T00:00:00Z", 5, 0, true},
		{"2030-01-01T23:59:59Z", 5, 0, true},
		{"2030-01-02T00:00:00Z", 20, 1, true},
		{"2030-01-02T23:30:00-02:00", 0, 2, false}, // 01:30 UTC on the 3rd
	} {
		limit, day, ok := w.CapOn(at(c.at))
		require.Equal(t, []any{c.cap, c.day, c.ok}, []any{limit, day, ok}, c.at)
	}
	n, _, _ := Warmup{Preset: "standard", Start: "2030-01-01"}.CapOn(at("2030-01-04T00:00:00Z"))
	require.Equal(t, 400, n)
}
