package transactional_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/transactional"
)

// Once message retention has deleted a message, its Idempotency-Key is free and
// makes a new message with the same job id. The new message must not repeat the
// old one's Message-ID, which receivers may drop as a duplicate: the Message-ID
// follows the message (its id), while every attempt of one message keeps one
// Message-ID. The Message-ID was once derived from the job id alone.
func TestReusedKeyGetsANewMessageID(t *testing.T) {
	t.Parallel()
	mb := render.NewRandomBuilder()
	b := transactional.Builder{Messages: mb}
	row := func(messageID int64) store.MessageClaimBatchRow {
		return store.MessageClaimBatchRow{AccountID: 1, CampaignID: 5, SubscriberID: messageID, Email: "ada@example.com",
			JobID: transactional.JobID(1, "order-1"), FromEmail: "shop@example.com", Subject: "Receipt", Text: "Hi",
			Data: json.RawMessage(`{}`), Headers: json.RawMessage(`[]`), Category: transactional.Transactional}
	}
	first, err := b.BuildMessage(row(3))
	require.NoError(t, err)
	retry, err := b.BuildMessage(row(3))
	require.NoError(t, err)
	reused, err := b.BuildMessage(row(4))
	require.NoError(t, err)
	require.Equal(t, first.MessageID, retry.MessageID, "one message, one Message-ID")
	require.Equal(t, first.JobID, reused.JobID, "the provider's idempotency key is the job id")
	require.NotEqual(t, first.MessageID, reused.MessageID, "a message under a reused key")
	require.Regexp(t, `^[a-z2-7]{26}@example\.com$`, reused.MessageID)
}
