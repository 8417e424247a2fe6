package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/harnessstore"
	"github.com/sendonce/sendonce/internal/store"
)

// With -retry-failed the campaign run has two passes. In the first the sink
// refuses every refuseEvery-th recipient (r<i>@example.com with i divisible by
// it) with a 422, so those rows end `failed` while the kills go on. Once the
// campaign is sent the sink accepts everybody, an API process is started and
// POST /v1/campaigns/{id}/retry-failed queues the failed rows again (a second
// call must answer 409), and the executor is killed as often again while it sends
// them. The end check is the campaign run's: every recipient delivered exactly once
// (the refused ones once, after the retry), the kept counters equal to a recount.

// refusedRecipient says whether r<i>@example.com is refused in the first pass.
func refusedRecipient(body []byte, every int) bool {
	var p struct {
		To string `json:"to"`
	}
	if json.Unmarshal(body, &p) != nil {
		return false
	}
	i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p.To, "r"), "@example.com"))
	return err == nil && i%every == 0
}

// chaosCampaignWithKey is chaosCampaign in an account made by the product
// (account.Service), whose API key the retry pass calls the API with.
func chaosCampaignWithKey(ctx context.Context, q *queries, db *chaosDB, n int) (acct, id int64, token string, err error) {
	a, token, err := account.NewService(db.pool).Create(ctx, "chaos-retry")
	if err != nil {
		return 0, 0, "", err
	}
	if _, err = q.ChaosSubscribersCreate(ctx, harnessstore.ChaosSubscribersCreateParams{AccountID: a.ID, N: int32(n)}); err != nil {
		return 0, 0, "", err
	}
	id, err = q.ChaosCampaignCreate(ctx, a.ID)
	return a.ID, id, token, err
}

// retryPass checks the first pass's outcome, then retries the failed rows
// through the API while the executor is killed o.Kills times, and returns the
// number of rows requeued and the kills made.
func retryPass(ctx context.Context, bin string, o chaosOptions, env []string, q *queries, snk *chaosSink,
	acct, campaignID int64, token string, logTo, stderr io.Writer) (requeued int64, kills int, err error) {
	refused := int64(o.Recipients / o.RefuseEvery)
	c, err := q.CampaignSendCounts(ctx, store.CampaignSendCountsParams{AccountID: acct, CampaignID: campaignID})
	if err != nil {
		return 0, 0, err
	}
	unique, dups, _ := snk.stats()
	if c.Failed != refused || c.Sent != int64(o.Recipients)-refused || unique != c.Sent || dups != 0 {
		return 0, 0, fmt.Errorf("chaos -retry-failed: after the first pass %d sent, %d failed, %d unknown, sink %d delivered %d duplicates; want %d failed, the rest sent and delivered",
			c.Sent, c.Failed, c.Unknown, unique, dups, refused)
	}
	fmt.Fprintf(stderr, "chaos: first pass sent %d, failed %d (refused by the sink)\n", c.Sent, c.Failed)
	snk.http.Refuse(nil)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	apiEnv := append(append([]string(nil), env...), "SENDONCE_ADDR="+addr, "SENDONCE_API_RATE_PER_SECOND=0")
	api, err := startProcess(bin, apiEnv, logTo, "serve", "--executor=false")
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = api.Process.Kill(); _ = api.Wait() }()
	cl := &messagesClient{base: "http://" + addr, token: token, http: &http.Client{Timeout: 10 * time.Second}}
	if err := cl.waitReady(ctx, time.Minute); err != nil {
		return 0, 0, err
	}

	// Slow enough that the kills land while the failed rows are sent again.
	rate := max(5, float64(refused)/(3*float64(o.Kills+1)))
	runEnv := append(append([]string(nil), env...), "SENDONCE_RATE_PER_SECOND="+strconv.FormatFloat(rate, 'f', 0, 64))
	path := "/v1/campaigns/" + strconv.FormatInt(campaignID, 10) + "/retry-failed"
	start := time.Now()
	for called := false; ; {
		restarted := time.Now()
		child, err := startServe(bin, runEnv, logTo)
		if err != nil {
			return 0, kills, err
		}
		if !called {
			called = true
			status, _, body, err := cl.do(ctx, http.MethodPost, path, "", nil)
			if err != nil || status != http.StatusOK {
				_ = child.Process.Kill()
				_ = child.Wait()
				return 0, 0, fmt.Errorf("chaos -retry-failed: POST %s: %d %s %v", path, status, body, err)
			}
			var res struct {
				Requeued int64 `json:"requeued"`
			}
			if err := json.Unmarshal(body, &res); err != nil {
				return 0, 0, err
			}
			requeued = res.Requeued
			// Once per campaign: a second call changes nothing.
			if status, _, body, err := cl.do(ctx, http.MethodPost, path, "", nil); err != nil || status != http.StatusConflict {
				return 0, 0, fmt.Errorf("chaos -retry-failed: a second POST %s answered %d %s %v, want 409", path, status, body, err)
			}
		}
		if kills == o.Kills {
			err := waitSent(ctx, q, campaignID, 15*time.Minute)
			werr := terminate(ctx, q, restarted, child)
			if err != nil {
				return requeued, kills, err
			}
			if werr != nil {
				return requeued, kills, fmt.Errorf("chaos -retry-failed: the last serve did not exit cleanly on SIGTERM: %w", werr)
			}
			return requeued, kills, nil
		}
		if !retryProgress(ctx, q, campaignID, snk.delivered) {
			_ = child.Process.Kill()
			_ = child.Wait()
			return requeued, kills, fmt.Errorf("chaos -retry-failed: no failed recipient was delivered after the retry (sink %d delivered)", snk.delivered())
		}
		if !sleepCtx(ctx, time.Duration(rand.Int64N(int64(time.Second)))) {
			_ = child.Process.Kill()
			_ = child.Wait()
			return requeued, kills, ctx.Err()
		}
		_ = child.Process.Kill() // SIGKILL
		_ = child.Wait()
		if st, _ := q.ChaosCampaignStatus(ctx, campaignID); st == "sent" {
			return requeued, kills, fmt.Errorf("chaos -retry-failed: the retry finished after %d kills; lower -refuse-every's share or raise -recipients", kills)
		}
		kills++
		fmt.Fprintf(stderr, "chaos: retry kill %d at %s, delivered %d\n", kills, time.Since(start).Round(time.Millisecond), snk.delivered())
	}
}

// retryProgress waits until the sink accepts something new, and reports false
// if the campaign is sent again without it or a minute passes: the retried rows
// were not delivered.
func retryProgress(ctx context.Context, q *queries, campaignID int64, delivered func() int64) bool {
	before := delivered()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if delivered() > before {
			return true
		}
		if st, _ := q.ChaosCampaignStatus(ctx, campaignID); st == "sent" && delivered() == before {
			return false
		}
		if !sleepCtx(ctx, 5*time.Millisecond) {
			return false
		}
	}
	return false
}
