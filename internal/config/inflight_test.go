package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMaxInFlight: unset, the API's bound is two requests per processor, never
// more than the API's database connections; set, it is what was set. A negative
// bound or queue length, or a queue wait outside 0–10s, stops the start with the variable named.
func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	c := Default()
	require.Zero(t, c.APIMaxInFlight)
	require.Equal(t, 100*time.Millisecond, c.APIQueueWait)
	require.Zero(t, c.APIQueueMax)
	require.Equal(t, 256, c.QueueMax(4), "64 waiting per slot")
	require.Equal(t, 64, c.QueueMax(0))
	require.NoError(t, c.Validate())
	require.Equal(t, 4, c.MaxInFlight(2))
	require.Equal(t, 2, c.MaxInFlight(0))
	require.Equal(t, 20, c.MaxInFlight(64), "capped by SENDONCE_DB_MAX_CONNS")
	c.APIMaxInFlight = 50
	require.Equal(t, 50, c.MaxInFlight(2))
	require.NoError(t, c.Validate())

	c.APIMaxInFlight = -1
	require.ErrorContains(t, c.Validate(), "SENDONCE_API_MAX_IN_FLIGHT must not be negative")
	c.APIMaxInFlight = 0
	for _, wait := range []time.Duration{-time.Millisecond, 11 * time.Second} {
		c.APIQueueWait = wait
		require.ErrorContains(t, c.Validate(), "SENDONCE_API_QUEUE_WAIT must be between 0 and 10s", wait)
	}
	c.APIQueueWait = 0
	require.NoError(t, c.Validate())
	c.APIQueueMax = 10
	require.Equal(t, 10, c.QueueMax(4))
	c.APIQueueMax = -1
	require.ErrorContains(t, c.Validate(), "SENDONCE_API_QUEUE_MAX must not be negative")
}

// TestMaxInFlightFromEnvironment: a value that is not a number is refused by
// name when the configuration loads.
func TestMaxInFlightFromEnvironment(t *testing.T) {
	t.Setenv("SENDONCE_API_MAX_IN_FLIGHT", "many")
	_, err := Load()
	require.ErrorContains(t, err, "SENDONCE_API_MAX_IN_FLIGHT")
	t.Setenv("SENDONCE_API_MAX_IN_FLIGHT", "12")
	t.Setenv("SENDONCE_API_QUEUE_WAIT", "soon")
	_, err = Load()
	require.ErrorContains(t, err, "SENDONCE_API_QUEUE_WAIT")
	t.Setenv("SENDONCE_API_QUEUE_WAIT", "-5ms")
	_, err = Load()
	require.ErrorContains(t, err, "SENDONCE_API_QUEUE_WAIT must be between 0 and 10s")
	t.Setenv("SENDONCE_API_QUEUE_WAIT", "5ms")
	c, err := Load()
	require.NoError(t, err)
	require.Equal(t, 12, c.MaxInFlight(2))
	require.Equal(t, 5*time.Millisecond, c.APIQueueWait)
}
