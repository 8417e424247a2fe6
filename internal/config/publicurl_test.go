package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Unset, SENDONCE_PUBLIC_URL follows the listen address, so `sendonce dev` on
// another port writes unsubscribe and confirmation links that reach it (they once
// pointed at http://127.0.0.1:8080 whatever SENDONCE_ADDR said). An address
// listening on every interface gives the loopback; a set value always wins.
func TestPublicURLFollowsTheListenAddress(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:29510": "http://127.0.0.1:29510",
		":8080":           "http://127.0.0.1:8080",
		"0.0.0.0:9000":    "http://127.0.0.1:9000",
		"[::]:9001":       "http://[::1]:9001",
		"[::1]:9002":      "http://[::1]:9002",
		"localhost:9003":  "http://localhost:9003",
	} {
		t.Setenv("SENDONCE_ADDR", addr)
		t.Setenv("SENDONCE_PUBLIC_URL", "")
		c, err := Load()
		require.NoError(t, err)
		require.Equal(t, want, c.PublicURL, addr)
	}
	t.Setenv("SENDONCE_ADDR", "127.0.0.1:29510")
	t.Setenv("SENDONCE_PUBLIC_URL", "https://mail.example.com")
	c, err := Load()
	require.NoError(t, err)
	require.Equal(t, "https://mail.example.com", c.PublicURL)
	require.Equal(t, "http://127.0.0.1:8080", Default().PublicURL)
}

// A message's Idempotency-Key holds while the message exists; message retention
// shorter than a day would free keys that clients still retry under (the API's
// other keys last 24 hours) and reuse job ids inside the providers' own
// deduplication windows (Resend's is 24 hours), where the new message would be
// dropped as a copy of the deleted one. Such a retention is refused at load; 0
// (keep every message) and a day or more are accepted.
func TestMessageRetentionAtLeastADay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retention time.Duration
		ok        bool
	}{{0, true}, {24 * time.Hour, true}, {90 * 24 * time.Hour, true}, {time.Hour, false}, {23*time.Hour + 59*time.Minute, false}} {
		c := Default()
		c.MessageRetention = tc.retention
		err := c.Validate()
		if tc.ok {
			require.NoError(t, err, tc.retention)
			continue
		}
		require.ErrorContains(t, err, "SENDONCE_MESSAGE_RETENTION must be 0 or at least 24h", tc.retention)
	}
}

// TestSequenceRetentionAtLeastADay: a deleted tracked event frees its id, so a
// retention shorter than a day (a client's retry would be a new event) is refused.
func TestSequenceRetentionAtLeastADay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retention time.Duration
		ok        bool
	}{{0, true}, {24 * time.Hour, true}, {time.Hour, false}, {-time.Hour, false}} {
		c := Default()
		c.SequenceRetention = tc.retention
		err := c.Validate()
		if tc.ok {
			require.NoError(t, err, tc.retention)
			continue
		}
		require.ErrorContains(t, err, "SENDONCE_SEQUENCE_RETENTION must", tc.retention)
	}
}
