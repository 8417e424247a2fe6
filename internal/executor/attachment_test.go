package executor

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// A campaign's files go to every recipient, loaded once: every message carries
// them, and all messages share one copy of the bytes.
func TestCampaignAttachmentsGoToEveryRecipient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	acct := f.account("a")
	f.subscribers(acct, "r", 30, "confirmed")
	c := f.campaign(acct, nil, "skip", time.Now().Add(-time.Second))
	files := []provider.Attachment{
		{Filename: "menu.pdf", ContentType: "application/pdf", Content: bytes.Repeat([]byte("%PDF"), 1000)},
		{Filename: "logo.png", ContentType: "image/png", ContentID: "logo", Content: []byte("png")},
	}
	q := store.New(pool)
	require.NoError(t, attachment.Store(ctx, q, acct, files, func(pos int32, a provider.Attachment, sum []byte) error {
		return q.CampaignAttachmentInsert(ctx, store.CampaignAttachmentInsertParams{CampaignID: c, Position: pos,
			AccountID: acct, Filename: a.Filename, ContentType: a.ContentType, ContentID: a.ContentID, Sha256: sum})
	}))

	p := newFake(true)
	e := newExecutor(t, pool, p, Config{Tick: 50 * time.Millisecond, Workers: 4, BatchSize: 10, Poll: 20 * time.Millisecond})
	runUntil(t, e)
	waitSent(t, f, e, c)
	_, _, order := p.snapshot()
	require.Len(t, order, 30)
	for _, m := range order {
		require.Len(t, m.Attachments, 2)
		for i, a := range m.Attachments {
			require.Equal(t, files[i].Filename, a.Filename)
			require.Equal(t, files[i].ContentID, a.ContentID)
			require.True(t, bytes.Equal(files[i].Content, a.Content))
		}
		require.Same(t, &order[0].Attachments[0].Content[0], &m.Attachments[0].Content[0], "one copy for every recipient")
		require.NotNil(t, m.Attachments[0].Encoded)
		require.Same(t, order[0].Attachments[0].Encoded, m.Attachments[0].Encoded, "encoded once for the campaign")
	}
	// The campaign is sent: its encodings were dropped from the cache as it finished.
	require.Zero(t, e.encoded.Len())
}
