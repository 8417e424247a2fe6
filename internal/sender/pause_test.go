package sender_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
)

var errRevoked = &provider.Error{Class: provider.Temporary, Code: 401, Config: true, Err: errors.New("API key revoked")}

// pauseFixture is an account (not the first) with a sender that has carried a
// transactional message (so it has a message stream) and a campaign sending
// through it to n subscribers.
func pauseFixture(t *testing.T, n int) (pool *pgxpool.Pool, acct, snd, campaign, stream int64) {
	t.Helper()
	pool = dbtest.New(t)
	ctx := context.Background()
	fx := testfactory.New(pool)
	fx.Account(t, "other")
	acct = fx.Account(t, "a").ID
	fx.Sender(t, acct, "unrelated", "http", false)
	snd = fx.Sender(t, acct, "esp", "postmark", false)
	stream, err := store.New(pool).MessageStreamEnsure(ctx, store.MessageStreamEnsureParams{AccountID: acct, SenderID: &snd})
	require.NoError(t, err)
	fx.Subscribers(t, acct, "r", n, "confirmed")
	now := time.Now()
	campaign = fx.Campaign(t, acct, testfactory.Campaign{Subject: "Hi", FromEmail: "news@example.com", HTML: "<p>Hi</p>",
		Text: "Hi", Status: "approved", ScheduledFor: &now, ApprovedAt: &now, SenderID: &snd})
	return pool, acct, snd, campaign, stream
}

func campaignStatus(t *testing.T, pool *pgxpool.Pool, id int64) (status string, reason *string) {
	t.Helper()
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT status, paused_reason FROM campaigns WHERE id = $1`, id).Scan(&status, &reason))
	return status, reason
}

// TestPauseOfASenderWithAMessageStream: a run of auth failures pauses the
// sender's campaigns even when the sender also has a message stream (which is
// always sending and is held otherwise, never paused).
func TestPauseOfASenderWithAMessageStream(t *testing.T) {
	t.Parallel()
	pool, acct, snd, campaign, stream := pauseFixture(t, 1)
	_, err := pool.Exec(context.Background(), `UPDATE campaigns SET status = 'sending', started_at = now() WHERE id = $1`, campaign)
	require.NoError(t, err)
	r := sender.NewRouter(sender.NewService(pool, nil), nil)
	for range sender.PauseAfter {
		r.Report(context.Background(), acct, snd, "r1@example.com", errRevoked)
	}
	status, reason := campaignStatus(t, pool, campaign)
	require.Equal(t, "paused", status)
	require.NotNil(t, reason)
	require.Contains(t, *reason, "API key revoked")
	status, _ = campaignStatus(t, pool, stream)
	require.Equal(t, "sending", status, "the stream stays sending")
}

// reportingRoutes routes every sender to one provider and reports outcomes to a
// real Router, which keeps the senders' health in the database.
type reportingRoutes struct {
	p executor.Provider
	r *sender.Router
}

func (s reportingRoutes) Route(context.Context, int64, int64) (executor.Route, error) {
	return executor.Route{Provider: s.p}, nil
}

func (s reportingRoutes) Report(ctx context.Context, accountID, id int64, email string, err error) {
	s.r.Report(ctx, accountID, id, email, err)
}

// revoked answers every send with an auth failure, as a provider does after its
// key was revoked.
type revoked struct{}

func (revoked) Send(context.Context, provider.Message) (string, error) { return "", errRevoked }
func (revoked) Idempotent() bool                                       { return false }

// TestRevokedKeyPausesTheCampaignOfASenderThatCarriedAMessage: seen from outside,
// after a sender has carried one transactional message, revoking its key must
// pause its campaign (recipients wait, nothing fails) rather than fail every
// recipient after MaxAttempts auth failures.
func TestRevokedKeyPausesTheCampaignOfASenderThatCarriedAMessage(t *testing.T) {
	t.Parallel()
	pool, _, _, campaign, _ := pauseFixture(t, 30)
	r := sender.NewRouter(sender.NewService(pool, nil), nil)
	e, err := executor.New(pool, revoked{}, executor.Config{Workers: 2, BatchSize: 2, Tick: 50 * time.Millisecond,
		Poll: 10 * time.Millisecond, Maintenance: 50 * time.Millisecond, BackoffBase: time.Millisecond,
		BackoffMax: time.Millisecond, Senders: reportingRoutes{p: revoked{}, r: r}}, nil, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	_ = e.Start(ctx) // the executor's Start never fails
	t.Cleanup(func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer scancel()
		require.NoError(t, e.Stop(sctx))
	})
	// Waits for the campaign to leave approved, building and sending: paused (right) or
	// sent (every row failed).
	deadline := time.Now().Add(60 * time.Second)
	var status string
	for time.Now().Before(deadline) {
		if status, _ = campaignStatus(t, pool, campaign); status != "sending" && status != "approved" && status != "building" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var failed int64
	require.NoError(t, pool.QueryRow(context.Background(),
		`SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'failed'`, campaign).Scan(&failed))
	require.Equal(t, "paused", status, fmt.Sprintf("%d recipients failed", failed))
	require.Zero(t, failed)
}
