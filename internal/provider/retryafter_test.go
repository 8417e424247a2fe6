package provider

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProviderRetryAfterIsClamped: a provider's Retry-After is a wait of at most a
// day. It was taken unclamped: "9999999999" seconds (or a date centuries away)
// would have parked a message for three hundred years, and a value past int64's
// seconds wrapped around.
func TestProviderRetryAfterIsClamped(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"30":                            30 * time.Second,
		"9999999999":                    24 * time.Hour,
		"99999999999999999999":          24 * time.Hour,
		"Fri, 31 Dec 9999 23:59:59 GMT": 24 * time.Hour,
		now.Add(-time.Hour).Format(http.TimeFormat): 0,
		"-5":   0,
		"soon": 0,
	} {
		h := http.Header{}
		h.Set("Retry-After", in)
		require.Equal(t, want, retryAfter(h, now), "%q", in)
	}
}
