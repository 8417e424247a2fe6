package transactional_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/transactional"
)

// stopwatch is a provider that notes when each message job reaches it and takes
// latency per call, like a remote provider.
type stopwatch struct {
	latency time.Duration
	mu      sync.Mutex
	arrived map[string]chan time.Time
}

func (s *stopwatch) Idempotent() bool { return true }

func (s *stopwatch) wait(job string) chan time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.arrived[job]
	if c == nil {
		c = make(chan time.Time, 1)
		s.arrived[job] = c
	}
	return c
}

func (s *stopwatch) Send(ctx context.Context, m provider.Message) (string, error) {
	if strings.HasPrefix(m.JobID, "message:") {
		s.wait(m.JobID) <- time.Now()
	}
	time.Sleep(s.latency)
	return "pid", nil
}

// BenchmarkMessageLatency measures a message's time from the request (POST
// /v1/messages through the real API) until the provider is handed it, on an idle
// executor and while a campaign of campaignRecipients is being sent through the
// same executor and provider (5 ms per call, 16 workers). It prints the median
// and p99 of messagesPerCase sequential messages:
//
//	go test -run '^$' -bench BenchmarkMessageLatency -benchtime 1x ./internal/transactional/
func BenchmarkMessageLatency(b *testing.B) {
	const messagesPerCase, campaignRecipients = 200, 100_000
	for range b.N {
		pool := dbtest.New(b)
		ctx := context.Background()
		accounts := account.NewService(pool)
		acct, key, err := accounts.Create(ctx, "bench")
		require.NoError(b, err)
		mb := render.NewRandomBuilder()
		cfg := config.Default()
		cfg.APIRatePerSecond = 0
		api := httptest.NewServer(httpapitest.New(b, pool, cfg, func(d *httpapi.Deps) {
			d.Campaigns.Messages, d.Transactional = mb, transactional.NewService(pool, mb)
		}))
		b.Cleanup(api.Close)
		p := &stopwatch{latency: 5 * time.Millisecond, arrived: map[string]chan time.Time{}}
		// The executor has a pool of its own, as in `sendonce serve`, so API requests and
		// sends do not queue for each other's connections.
		execCfg := pool.Config().Copy()
		execCfg.MaxConns = 10
		execPool, err := pgxpool.NewWithConfig(ctx, execCfg)
		require.NoError(b, err)
		b.Cleanup(execPool.Close)
		ex, err := executor.New(execPool, p, executor.Config{Workers: 16, BatchSize: 20, Tick: time.Minute,
			Transactional: transactional.Builder{Messages: mb}}, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
		require.NoError(b, err)
		runCtx, cancel := context.WithCancel(ctx)
		_ = ex.Start(runCtx) // the executor's Start never fails

		measure := func(name string) {
			lat := make([]time.Duration, 0, messagesPerCase)
			for i := range messagesPerCase {
				k := fmt.Sprintf("%s-%d", name, i)
				body := `{"to":"ada@example.com","from":"shop@example.com","subject":"Receipt","text":"Hi {{.Name}}"}`
				req, _ := http.NewRequest("POST", api.URL+"/v1/messages", bytes.NewBufferString(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", k)
				arrived := p.wait(transactional.JobID(acct.ID, k))
				start := time.Now()
				res, err := http.DefaultClient.Do(req)
				require.NoError(b, err)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				require.Equal(b, http.StatusAccepted, res.StatusCode)
				lat = append(lat, (<-arrived).Sub(start))
				time.Sleep(10 * time.Millisecond)
			}
			slices.Sort(lat)
			p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
			b.ReportMetric(float64(p50.Microseconds())/1000, name+"_p50_ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, name+"_p99_ms")
			fmt.Printf("%s: messages=%d request→provider median=%v p99=%v max=%v\n", name, len(lat), p50, p99, lat[len(lat)-1])
		}
		measure("idle")

		// A campaign of campaignRecipients, started through the executor.
		fx := testfactory.New(pool)
		fx.Subscribers(b, acct.ID, "s", campaignRecipients, "confirmed")
		now := time.Now()
		camp := fx.Campaign(b, acct.ID, testfactory.Campaign{Name: "news", Subject: "News", FromEmail: "news@example.com",
			Text: "Hello {{.Name}}", Status: "approved", ScheduledFor: &now, ApprovedAt: &now})
		_, err = pool.Exec(ctx, `SELECT pg_notify('sendonce_campaigns', $1::text)`, fmt.Sprint(camp))
		require.NoError(b, err)
		for {
			var status string
			require.NoError(b, pool.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1`, camp).Scan(&status))
			if status == "sending" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		measure("under_campaign")
		var queued int64
		require.NoError(b, pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE campaign_id = $1 AND status = 'queued'`, camp).Scan(&queued))
		fmt.Printf("campaign rows still queued after the measurement: %d of %d\n", queued, campaignRecipients)
		cancel()
		require.NoError(b, ex.Stop(context.Background()))
	}
}
