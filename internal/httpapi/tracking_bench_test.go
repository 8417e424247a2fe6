package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"

	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/tracking"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// BenchmarkClickRedirect drives GET /c/{token} over real HTTP (the full router and
// middleware) at a paced 1,000 clicks/s from 1,000 recipients of one campaign,
// with the flusher writing the hits and their events to PostgreSQL meanwhile,
// and reports the redirect latency (p50, p99) and this process's CPU per 1,000
// clicks (server, flusher and client together; PostgreSQL's own CPU is not in it).
// p50/p99 are what the client saw; server-p50/p99 the handler's own time.
// b.N is the number of clicks:
//
//	go test -run '^$' -bench BenchmarkClickRedirect -benchtime 5000x ./internal/httpapi/
func BenchmarkClickRedirect(b *testing.B) {
	keys, err := token.NewRing([]string{"k1:0123456789abcdef0123456789abcdef"})
	require.NoError(b, err)
	signer := unsubscribe.NewSigner(keys)
	tokens := tracking.NewTokens(keys, "https://mail.example.com")
	var svc *tracking.Service
	pool := dbtest.New(b)
	ctx := context.Background()
	_, _, err = account.NewService(pool).Create(ctx, "bench")
	require.NoError(b, err)
	svc = tracking.New(pool, tokens, tracking.Config{}, nil)
	cfg := config.Default()
	cfg.APIRatePerSecond = 0
	e := struct {
		pool    *pgxpool.Pool
		handler http.Handler
	}{pool, httpapitest.New(b, pool, cfg, func(d *httpapi.Deps) {
		d.Unsubscribe, d.Tracking = unsubscribe.NewService(pool, signer), tracking.API{Service: svc}
	})}
	var acct int64
	require.NoError(b, e.pool.QueryRow(ctx, `SELECT min(id) FROM accounts`).Scan(&acct))
	fx := testfactory.New(e.pool)
	started := time.Now()
	camp := fx.Campaign(b, acct, testfactory.Campaign{Name: "bench", Status: "sent", StartedAt: &started})
	var links []string
	for i := 1; i <= 5; i++ {
		links = append(links, fmt.Sprintf("https://shop.example/p/%d", i))
	}
	fx.TrackedLinks(b, acct, camp, links...)
	_, err = e.pool.Exec(ctx, `INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, sent_at)
		SELECT $2, $1, i, 'r' || i || '@example.com', 'r' || i || '@example.com', 'campaign:' || $2::bigint || ':' || i, 'sent',
		       now() - interval '1 hour'
		FROM generate_series(1, 1000) i`, acct, camp)
	require.NoError(b, err)
	rows, err := e.pool.Query(ctx, `SELECT id FROM sends WHERE campaign_id = $1 ORDER BY id`, camp)
	require.NoError(b, err)
	var urls []string
	// The server's own time per request (routing, middleware, token, record),
	// apart from what the client and the loopback add.
	var smu sync.Mutex
	var served []time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		e.handler.ServeHTTP(w, r)
		d := time.Since(start)
		smu.Lock()
		served = append(served, d)
		smu.Unlock()
	}))
	defer srv.Close()
	for rows.Next() {
		var id int64
		require.NoError(b, rows.Scan(&id))
		urls = append(urls, srv.URL+"/c/"+tokens.ClickToken(tracking.Click{
			Send: tracking.Send{AccountID: acct, CampaignID: camp, SendID: id}, Link: 1 + int(id%5), Links: 5}))
	}
	require.NoError(b, rows.Err())

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(runCtx) }()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	get := func(u string) time.Duration {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("User-Agent", firefox)
		start := time.Now()
		res, err := client.Do(req)
		d := time.Since(start)
		if err != nil || res.StatusCode != http.StatusFound {
			b.Fatalf("click: %v %v", err, res)
		}
		res.Body.Close()
		return d
	}
	for _, u := range urls[:50] { // warm the link cache and the connections
		get(u)
	}

	const rate = 1000 // clicks per second
	lat := make([]time.Duration, b.N)
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	smu.Lock()
	served = served[:0]
	smu.Unlock()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if d := time.Until(start.Add(time.Duration(i) * time.Second / rate)); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			lat[i] = get(urls[i%len(urls)])
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := cpuTime() - cpu0
	stop()
	<-done
	_, err = svc.Flush(ctx, true)
	require.NoError(b, err)
	var written int64
	require.NoError(b, e.pool.QueryRow(ctx, `SELECT count(*) FROM tracking_hits WHERE campaign_id = $1`, camp).Scan(&written))

	slices.Sort(lat)
	slices.Sort(served)
	b.ReportMetric(float64(served[len(served)/2].Microseconds())/1000, "server-p50-ms")
	b.ReportMetric(float64(served[len(served)*99/100].Microseconds())/1000, "server-p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(cpu.Seconds()*1000/float64(b.N)*1000, "cpu-ms/1000clicks")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "clicks/s")
	b.ReportMetric(float64(written), "hits-written")
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClickHandler is the redirect's own cost, unpaced and without the
// network: one GET /c/{token} through the router per op (the hit held, not written).
func BenchmarkClickHandler(b *testing.B) {
	keys, err := token.NewRing([]string{"k1:0123456789abcdef0123456789abcdef"})
	require.NoError(b, err)
	signer := unsubscribe.NewSigner(keys)
	tokens := tracking.NewTokens(keys, "https://mail.example.com")
	pool := dbtest.New(b)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "bench")
	require.NoError(b, err)
	fx := testfactory.New(pool)
	camp := fx.Campaign(b, acc.ID, testfactory.Campaign{Name: "bench", Status: "sent"})
	fx.TrackedLinks(b, acc.ID, camp, "https://shop.example/")
	svc := tracking.New(pool, tokens, tracking.Config{MaxHeld: 1 << 30}, nil)
	cfg := config.Default()
	h := httpapitest.New(b, pool, cfg, func(d *httpapi.Deps) {
		d.Unsubscribe, d.Tracking = unsubscribe.NewService(pool, signer), tracking.API{Service: svc}
	})
	path := "/c/" + tokens.ClickToken(tracking.Click{Send: tracking.Send{AccountID: acc.ID, CampaignID: camp, SendID: 7}, Link: 1, Links: 1})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		req := httptest.NewRequest("GET", path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusFound {
			b.Fatal(rec.Code)
		}
	}
}
