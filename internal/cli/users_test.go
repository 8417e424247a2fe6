package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// TestCLIUsers: `users invite` invites through the API (the link goes by mail,
// not to the terminal) and `users list` shows the pending invitation; a role
// that does not exist is the API's 422.
func TestCLIUsers(t *testing.T) {
	t.Parallel()
	run, _, _ := setup(t)
	r := run("users", "invite", "grace@example.com", "--role", "editor", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var inv client.Invitation
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &inv))
	require.Equal(t, "grace@example.com", inv.Email)
	require.Equal(t, client.MemberRole("editor"), inv.Role)
	require.NotContains(t, r.stdout, "soi_", "the invitation token is mailed only")

	r = run("users", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "grace@example.com")
	require.Contains(t, r.stdout, "editor  invited")
	require.NotEqual(t, 0, run("users", "invite", "x@example.com", "--role", "god").code)
}
