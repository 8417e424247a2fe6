package executor

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// Transactional messages are send rows of a per-account message stream: a campaign
// of kind kindMessages that is always sending. Everything after the claim is the
// campaigns' path (workers, the provider call keyed by job_id, the completer's
// batched ack, retries, the rescuer, ambiguous_policy); what differs is the claim
// (MessageClaimBatch: each message's own content and its category's suppression
// rules) and where the message comes from (MessageBuilder). Streams are dealt
// before any campaign of any account, within the same rate limits.

// kindMessages is the campaigns.kind of a message stream.
const kindMessages = "messages"

// MessageBuilder builds the provider message of one claimed transactional message.
// An error fails that message permanently (its content cannot render).
type MessageBuilder interface {
	BuildMessage(r store.MessageClaimBatchRow) (provider.Message, error)
}

// isStream reports whether c is an account's message stream.
func (c *campaign) isStream() bool { return c.Kind == kindMessages }

// claimAndHandOut claims up to n rows of c and gives them to the workers. It
// returns how many rows the claim took and how many go to the provider.
func (e *Executor) claimAndHandOut(ctx context.Context, c *campaign, n int, claimedAt time.Time) (claimed, sending int, err error) {
	if !c.isStream() {
		rows, err := e.claim(ctx, c, n)
		if err != nil {
			return 0, 0, err
		}
		return len(rows), e.handOut(c, rows, claimedAt), nil
	}
	if e.cfg.Transactional == nil {
		return 0, 0, nil // this process does not send messages
	}
	msgs, err := e.claimMessages(ctx, c, n)
	if err != nil {
		return 0, 0, err
	}
	rows := make([]store.SendClaimBatchRow, len(msgs))
	for i, m := range msgs {
		rows[i] = store.SendClaimBatchRow{ID: m.ID, AccountID: m.AccountID, SubscriberID: m.SubscriberID, Email: m.Email,
			JobID: m.JobID, Status: m.Status, Attempts: m.Attempts, LeaseUntil: m.LeaseUntil, ExecutorID: m.ExecutorID,
			Name: m.ToName, Attributes: m.Data}
	}
	return len(rows), e.handOutWith(c, rows, claimedAt, msgs), nil
}

// claimMessages runs MessageClaimBatch for up to n rows of stream c, under
// context.WithoutCancel like claim.
func (e *Executor) claimMessages(ctx context.Context, c *campaign, n int) ([]store.MessageClaimBatchRow, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var executorID *int64
	if id, _, _ := e.live.get(); id != 0 {
		executorID = &id
	}
	start := time.Now()
	rows, err := e.q.MessageClaimBatch(ctx, store.MessageClaimBatchParams{
		Now:        e.now(),
		Lease:      pgtype.Interval{Microseconds: e.cfg.Lease.Microseconds(), Valid: true},
		ExecutorID: executorID,
		CampaignID: c.ID,
		N:          int32(n),
	})
	e.metrics.claimSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		return nil, err
	}
	e.metrics.claimBatch.Observe(float64(len(rows)))
	return rows, nil
}
