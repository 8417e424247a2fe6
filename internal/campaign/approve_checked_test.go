package campaign_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
)

// An approval made after a check of the From domain holds the campaign to the
// From and sender that check saw: an edit committed between the check and the
// approval is a 409 and the draft stays a draft, so an unchecked From is never
// approved. The check's lookups run outside the transaction; here the edit is
// simply made between the two steps.
func TestApproveCheckedRefusesAnEditedFrom(t *testing.T) {
	t.Parallel()
	s, acc, ctx := setup(t)
	c := draft(t, s, acc, ctx)
	checked := campaign.Checked{FromEmail: c.FromEmail, SenderID: c.SenderID}

	_, err := s.Update(ctx, acc, c.ID, campaign.Fields{FromEmail: str("ceo@unchecked-domain.com")})
	require.NoError(t, err)
	_, err = s.ApproveChecked(ctx, acc, c.ID, nil, checked)
	require.True(t, apperr.Is(err, apperr.Conflict), "%v", err)
	require.Contains(t, err.Error(), "from_email")
	got, err := s.Get(ctx, acc, c.ID)
	require.NoError(t, err)
	require.Equal(t, campaign.StatusDraft, got.Status)

	// Checked again (as the handler would) it approves.
	got, err = s.ApproveChecked(ctx, acc, c.ID, nil, campaign.Checked{FromEmail: got.FromEmail, SenderID: got.SenderID})
	require.NoError(t, err)
	require.Equal(t, campaign.StatusApproved, got.Status)

	// A sender id the check did not see is refused the same way.
	c = draft(t, s, acc, ctx)
	other := int64(4242)
	_, err = s.ApproveChecked(ctx, acc, c.ID, nil, campaign.Checked{FromEmail: c.FromEmail, SenderID: &other})
	require.True(t, apperr.Is(err, apperr.Conflict), "%v", err)

	// An approved campaign answers the usual conflict, not the From one.
	_, err = s.ApproveChecked(ctx, acc, got.ID, nil, campaign.Checked{FromEmail: got.FromEmail})
	require.True(t, apperr.Is(err, apperr.Conflict), "%v", err)
	require.NotContains(t, err.Error(), "from_email")
}
