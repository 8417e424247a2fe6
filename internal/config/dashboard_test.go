package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDashboardSwitch: the dashboard is on by default, in a Config literal as from
// the environment, and SENDONCE_DASHBOARD=false turns it off.
func TestDashboardSwitch(t *testing.T) {
	require.False(t, bool(Config{}.DashboardOff), "a Config literal serves the dashboard")
	c, err := Load()
	require.NoError(t, err)
	require.False(t, bool(c.DashboardOff))
	t.Setenv("SENDONCE_DASHBOARD", "false")
	c, err = Load()
	require.NoError(t, err)
	require.True(t, bool(c.DashboardOff))
	t.Setenv("SENDONCE_DASHBOARD", "maybe")
	_, err = Load()
	require.Error(t, err)
}
