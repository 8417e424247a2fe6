package backoff

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRetryAfter: both forms of RFC 9110 §10.2.3, clamped to a day; a past date
// is 0; anything else is absent.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"   ", 0, false},
		{"0", 0, true},
		{"1", time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"86400", MaxRetryAfter, true},
		{"86401", MaxRetryAfter, true},
		{"9223372036854775807", MaxRetryAfter, true},
		{"99999999999999999999999999", MaxRetryAfter, true},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"5 seconds", 0, false},
		{date(90 * time.Second), 90 * time.Second, true},
		{date(-time.Hour), 0, true},
		{"Thu, 01 Jan 1970 00:00:00 GMT", 0, true},
		{date(48 * time.Hour), MaxRetryAfter, true},
		{"Fri, 31 Dec 9999 23:59:59 GMT", MaxRetryAfter, true},
		{now.Add(time.Minute).Format(time.RFC850), time.Minute, true},
		{now.Add(time.Minute).Format(time.ANSIC), time.Minute, true},
		{"Sun, 06 Dec 2026 25:00:00 GMT", 0, false},
	} {
		got, ok := RetryAfter(tc.in, now)
		require.Equal(t, tc.ok, ok, "%q", tc.in)
		require.Equal(t, tc.want, got, "%q", tc.in)
	}
}
