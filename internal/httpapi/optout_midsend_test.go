package httpapi_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/unsubscribe"
	"github.com/sendonce/sendonce/internal/webhook"
)

// midSendProvider accepts every message and, on the trigger-th one, runs fire
// synchronously, so the webhook lands while the campaign is mid-send.
type midSendProvider struct {
	trigger int64
	fire    func()
	n       atomic.Int64
	// gate holds every other send back while the opt-outs are posted, so the claim
	// front cannot run past the targets meanwhile (on a loaded machine 50 POSTs
	// can take seconds, long enough for the other workers to reach them): what is
	// tested is that an opt-out stops rows not yet claimed, not how fast it arrives.
	gate   sync.RWMutex
	mu     sync.Mutex
	byTo   map[string]int
	sample provider.Message
}

func (p *midSendProvider) Send(_ context.Context, m provider.Message) (string, error) {
	if p.n.Add(1) == p.trigger {
		p.gate.Lock()
		p.fire()
		p.gate.Unlock()
	} else {
		p.gate.RLock()
		defer p.gate.RUnlock()
	}
	p.mu.Lock()
	p.byTo[strings.ToLower(m.To)]++
	p.sample = m.Clone()
	p.mu.Unlock()
	return "pid-" + m.JobID, nil
}

func (p *midSendProvider) Idempotent() bool { return true }

// signedPost posts a Standard Webhooks delivery; safe off the test goroutine.
func signedPost(url, secret, id string, body []byte) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("webhook answered %d: %s", resp.StatusCode, b)
	}
	return nil
}

// TestSignedWebhookStopsMidSendCampaign is issue 6's acceptance test: signed webhooks
// posted while a 20,000-recipient campaign is sending, with the real executor and
// database, stop every message to those addresses that was not yet claimed; every
// other recipient gets exactly one message. It then takes the List-Unsubscribe URL
// from a sent message and POSTs the one-click body to it.
func TestSignedWebhookStopsMidSendCampaign(t *testing.T) {
	t.Parallel()
	const recipients, trigger = 20000, 2000
	ctx := context.Background()
	pool := dbtest.New(t)
	accounts := account.NewService(pool)
	acc, _, err := accounts.Create(ctx, "bulk")
	require.NoError(t, err)
	testfactory.New(pool).Subscribers(t, acc.ID, "r", recipients, "confirmed")
	// Opt-outs arrive for addresses far behind the claim front at the trigger.
	var targets []string
	for i := 15001; i <= 15050; i++ {
		targets = append(targets, fmt.Sprintf("r%d@example.com", i))
	}

	keys, err := token.NewRing([]string{"k1:midsend-secret-0123456789"})
	require.NoError(t, err)
	signer := unsubscribe.NewSigner(keys)
	hooks := webhook.NewService(pool, webhook.Options{})
	srv := httptest.NewServer(httpapitest.New(t, pool, config.Default(), func(d *httpapi.Deps) {
		d.Unsubscribe, d.Webhooks = unsubscribe.NewService(pool, signer), webhook.API{Service: hooks}
	}))
	t.Cleanup(srv.Close)
	ep, creds, err := hooks.Create(ctx, acc.ID, webhook.CreateInput{Source: "standard"})
	require.NoError(t, err)

	var fireErr error
	var claimedAtFire int
	fired := make(chan struct{})
	p := &midSendProvider{trigger: trigger, byTo: map[string]int{}}
	p.fire = func() {
		defer close(fired)
		if fireErr = pool.QueryRow(ctx, `SELECT count(*) FROM sends WHERE email_lower = ANY($1) AND status <> 'queued'`,
			targets).Scan(&claimedAtFire); fireErr != nil {
			return
		}
		for i, addr := range targets {
			body := fmt.Appendf(nil, `{"type":"subscriber.unsubscribed","data":{"email":%q}}`, addr)
			if fireErr = signedPost(srv.URL+ep.Path, creds.Secret, fmt.Sprintf("evt-%d", i), body); fireErr != nil {
				return
			}
		}
	}

	ex, err := executor.New(pool, p, executor.Config{
		Workers: 8, BatchSize: 50, Tick: 200 * time.Millisecond, Maintenance: 200 * time.Millisecond,
		Links: signer.Links(srv.URL, ""),
	}, nil, nil)
	require.NoError(t, err)
	now := time.Now()
	campaignID := testfactory.New(pool).Campaign(t, acc.ID, testfactory.Campaign{Name: "bulk", Subject: "Hello",
		FromEmail: "news@example.com", Text: "Hi. Unsubscribe: {{.UnsubscribeURL}}", Status: "approved", ApprovedAt: &now,
		ScheduledFor: &now})
	_ = ex.Start(ctx) // the executor's Start never fails
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		require.NoError(t, ex.Stop(stopCtx))
	})

	// Polling for completion bounds a hung executor; it asserts nothing about speed.
	require.Eventually(t, func() bool {
		var status string
		_ = pool.QueryRow(ctx, `SELECT status FROM campaigns WHERE id = $1`, campaignID).Scan(&status)
		return status == "sent"
	}, 5*time.Minute, 100*time.Millisecond)
	<-fired
	require.NoError(t, fireErr)
	require.Zero(t, claimedAtFire, "the targets were not yet claimed when the webhooks arrived")

	p.mu.Lock()
	defer p.mu.Unlock()
	for _, addr := range targets {
		require.Zero(t, p.byTo[addr], "%s got a message after its opt-out", addr)
	}
	require.Len(t, p.byTo, recipients-len(targets))
	for addr, n := range p.byTo {
		require.Equal(t, 1, n, addr)
	}
	var suppressed, sent int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'suppressed'), count(*) FILTER (WHERE status = 'sent')
		FROM sends WHERE campaign_id = $1`, campaignID).Scan(&suppressed, &sent))
	require.Equal(t, len(targets), suppressed)
	require.Equal(t, recipients-len(targets), sent)

	// The List-Unsubscribe URL of a sent message works with the one-click body.
	var header string
	for _, h := range p.sample.Headers {
		if strings.EqualFold(h.Name, "List-Unsubscribe") {
			header = h.Value
		}
	}
	link := regexp.MustCompile(`<(http[^>]+)>`).FindStringSubmatch(header)
	require.Len(t, link, 2, "List-Unsubscribe: %q", header)
	resp, err := http.Post(link[1], "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var reason string
	require.NoError(t, pool.QueryRow(ctx, `SELECT reason FROM suppressions WHERE account_id = $1 AND email_lower = $2`,
		acc.ID, strings.ToLower(p.sample.To)).Scan(&reason))
	require.Equal(t, "unsubscribe", reason)
}
