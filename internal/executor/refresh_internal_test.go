package executor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/store"
)

// TestSameCampaignRowComparesSenderIDsByValue: two reads of one campaign with a
// sender are the same row (they used to compare unequal by pointer, so such a
// campaign was rebuilt on every refresh); a changed sender or field is not.
func TestSameCampaignRowComparesSenderIDsByValue(t *testing.T) {
	t.Parallel()
	id := func(v int64) *int64 { return &v }
	a := store.CampaignListSendingRow{ID: 3, AccountID: 1, Subject: "s", SenderID: id(7), StreamSenderID: id(9)}
	b := a
	b.SenderID, b.StreamSenderID = id(7), id(9)
	require.True(t, sameCampaignRow(a, b))
	b.SenderID = id(8)
	require.False(t, sameCampaignRow(a, b))
	b.SenderID = nil
	require.False(t, sameCampaignRow(a, b))
	b = a
	b.SenderID = id(7)
	b.Subject = "t"
	require.False(t, sameCampaignRow(a, b))
	require.True(t, sameCampaignRow(store.CampaignListSendingRow{ID: 1}, store.CampaignListSendingRow{ID: 1}))
	// A sender pool's id too (a pool campaign kept its cursor and templates only so).
	a, b = store.CampaignListSendingRow{ID: 4, PoolID: id(2)}, store.CampaignListSendingRow{ID: 4, PoolID: id(2)}
	require.True(t, sameCampaignRow(a, b))
	b.PoolID = id(5)
	require.False(t, sameCampaignRow(a, b))
}
