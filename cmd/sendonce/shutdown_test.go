package main

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/invariant"
	"github.com/sendonce/sendonce/internal/sink"
	"github.com/sendonce/sendonce/internal/store"
)

// smtpService prepares a campaign of n recipients and the configuration of an
// executor-only service sending it through the SMTP sink s.
func smtpService(t *testing.T, n int, s *sink.SMTP) (config.Config, *pgxPool, int64) {
	t.Helper()
	ctx := context.Background()
	pool := dbtest.New(t)
	q := harnessstore.New(pool)
	acct, err := q.ChaosAccountCreate(ctx, "acme")
	require.NoError(t, err)
	_, err = q.ChaosSubscribersCreate(ctx, harnessstore.ChaosSubscribersCreateParams{AccountID: acct, N: int32(n)})
	require.NoError(t, err)
	id, err := q.ChaosCampaignCreate(ctx, acct)
	require.NoError(t, err)
	addr, err := s.Listen("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	host, port, _ := net.SplitHostPort(addr)
	cfg := config.Default()
	cfg.DatabaseURL = pool.Config().ConnString()
	cfg.LogLevel = "debug"
	cfg.UnsubscribeSecret = []string{"k1:a-test-secret-0123456789abcdef"}
	cfg.Provider, cfg.SMTPHost, cfg.SMTPSecurity = "smtp", host, "none"
	cfg.SMTPPort, _ = strconv.Atoi(port)
	return cfg, pool, id
}

// serveUntilSIGTERM runs the executor-only service until ready() holds, then
// delivers the SIGTERM (main's signal.NotifyContext cancels run's context) and
// returns run's error and how long run took to return after it.
func serveUntilSIGTERM(t *testing.T, cfg config.Config, ready func() bool) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, Options{Executor: true}, testWriter{t}, testWriter{t}) }()
	require.Eventually(t, ready, 30*time.Second, 5*time.Millisecond)
	cancel()
	signalled := time.Now()
	err := <-done
	return time.Since(signalled), err
}

// TestSIGTERMWithASlowSMTPRelayExitsWithinTheShutdownTimeout: the relay takes 3 s
// per message and SENDONCE_SHUTDOWN_TIMEOUT is 2 s. The in-flight SMTP exchanges
// are cut inside the deadline (not at SMTP_TIMEOUT), the process exits 0 within
// it, and every row is settled honestly: the cut exchanges had sent their body,
// so they are unknown (ambiguous_policy skip), the rest went back to the queue.
func TestSIGTERMWithASlowSMTPRelayExitsWithinTheShutdownTimeout(t *testing.T) {
	t.Parallel()
	s := sink.NewSMTP(sink.SMTPOptions{Latency: 3 * time.Second})
	cfg, pool, id := smtpService(t, 20, s)
	cfg.ShutdownTimeout = 2 * time.Second
	took, err := serveUntilSIGTERM(t, cfg, func() bool { return s.Stats().RawAttempts >= int64(cfg.SMTPConns) })
	require.NoError(t, err)
	require.Less(t, took, cfg.ShutdownTimeout, "shutdown must end within SENDONCE_SHUTDOWN_TIMEOUT")

	c, err := store.New(pool).CampaignSendCounts(context.Background(), store.CampaignSendCountsParams{AccountID: accountOf(t, pool, id), CampaignID: id})
	require.NoError(t, err)
	require.Zero(t, c.Sending, "every claimed row is released or reported")
	require.Equal(t, int64(20), c.Queued+c.Unknown+c.Sent)
	require.Positive(t, c.Unknown, "the exchanges cut after their body may have been delivered")
	st := s.Stats()
	require.LessOrEqual(t, st.Unique, c.Sent+c.Unknown, "whatever the relay took is recorded sent or unknown, never requeued")
	require.Zero(t, st.Duplicates)
	invariant.Require(t, pool, invariant.Options{Recipients: map[int64]int64{id: 20}})
}

// TestSIGTERMAfterIdleSMTPConnectionsExitsZero: the pooled connections sat idle
// longer than SENDONCE_SMTP_TIMEOUT, so they cannot take a QUIT any more. Closing
// them is no failed shutdown: exit 0.
func TestSIGTERMAfterIdleSMTPConnectionsExitsZero(t *testing.T) {
	t.Parallel()
	s := sink.NewSMTP(sink.SMTPOptions{})
	cfg, pool, id := smtpService(t, 5, s)
	cfg.SMTPTimeout = 200 * time.Millisecond
	var sentAt time.Time
	_, err := serveUntilSIGTERM(t, cfg, func() bool {
		if sentAt.IsZero() {
			var st string
			_ = pool.QueryRow(context.Background(), `SELECT status FROM campaigns WHERE id = $1`, id).Scan(&st)
			if st == "sent" {
				sentAt = time.Now()
			}
			return false
		}
		return time.Since(sentAt) > 3*cfg.SMTPTimeout // idle well past the timeout
	})
	require.NoError(t, err)
	require.EqualValues(t, 5, s.Stats().Unique)
	invariant.Require(t, pool, invariant.Options{Recipients: map[int64]int64{id: 5}})
}

func accountOf(t *testing.T, pool *pgxPool, campaign int64) int64 {
	t.Helper()
	var acct int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT account_id FROM campaigns WHERE id = $1`, campaign).Scan(&acct))
	return acct
}

// TestSIGTERMDuringStartupExitsZero: a stop asked for while the service is still
// starting (opening its pools, applying migrations, starting the executor) is an
// orderly stop, not a failure: run returns nil, so the process exits 0. A deploy
// that replaces a process seconds after starting it (or a test harness that signals
// the processes it just started) must not read as a crash.
func TestSIGTERMDuringStartupExitsZero(t *testing.T) {
	t.Parallel()
	s := sink.NewSMTP(sink.SMTPOptions{})
	cfg, _, _ := smtpService(t, 1, s)
	for _, opts := range []Options{{Executor: true}, {API: true, Executor: true}} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the SIGTERM arrived before run got anywhere
		cfg.Addr = "127.0.0.1:0"
		require.NoError(t, run(ctx, cfg, opts, testWriter{t}, testWriter{t}), "%+v", opts)
	}
}
