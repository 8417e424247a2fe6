package httpapi

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/access"
)

// principalForRole gives a person (or anything holding a role) the role's
// permissions over every list, and an unknown role nothing; withPrincipal puts
// its account and actor where handlers and domain packages read them.
func TestPrincipalForRole(t *testing.T) {
	actor := access.Actor{Type: access.ActorUser, ID: 7, Label: "ada@example.com"}
	p := principalForRole(42, access.RoleEditor, actor)
	require.True(t, p.Permissions.Has(access.CampaignsWrite))
	require.False(t, p.Permissions.Has(access.CampaignsApprove))
	require.Nil(t, p.ListIDs)
	require.Empty(t, principalForRole(42, "root", actor).Permissions)

	ctx := withPrincipal(context.Background(), p)
	require.Equal(t, int64(42), ctx.Value(accountKey{}))
	got, ok := access.ActorFrom(ctx)
	require.True(t, ok)
	require.Equal(t, actor, got)
}
