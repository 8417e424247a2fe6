package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// messagesClient is an API client of the run's account.
type messagesClient struct {
	base, token string
	http        *http.Client
}

// chaosMessage is the part of an API message the run checks.
type chaosMessage struct {
	ID             int64  `json:"id"`
	IdempotencyKey string `json:"idempotency_key"`
	Status         string `json:"status"`
}

// do sends one request, retrying it unchanged while the service is down or
// answers 5xx/429, and returns the answer's status, headers and body.
func (c *messagesClient) do(ctx context.Context, method, path, key string, body any) (int, http.Header, []byte, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, nil, nil, err
		}
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(payload))
		if err != nil {
			return 0, nil, nil, err
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := c.http.Do(req)
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
				return resp.StatusCode, resp.Header, b, nil
			}
			err = fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
			if rerr != nil {
				err = rerr
			}
		}
		if ctx.Err() != nil {
			return 0, nil, nil, ctx.Err()
		}
		if attempt == 600 { // a minute of retries: the service does not come back
			return 0, nil, nil, err
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

func (c *messagesClient) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if resp, err := c.http.Get(c.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			return ctx.Err()
		}
	}
	return errors.New("chaos-messages: the API process did not become ready")
}

// postAll posts messages 0…n-1 from the given number of clients, in blocks of 50:
// every fourth block as one POST /v1/messages/batch, the others one by one. ids
// receives each message's id.
func (c *messagesClient) postAll(ctx context.Context, n, clients int, ids []int64, posted *atomic.Int64) error {
	const block = 50
	blocks := make(chan int)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range blocks {
				lo, hi := b*block, min(n, (b+1)*block)
				var err error
				if b%4 == 3 {
					err = c.postBatch(ctx, lo, hi, ids)
				} else {
					for i := lo; i < hi && err == nil; i++ {
						ids[i], _, err = c.post(ctx, i)
					}
				}
				if err != nil {
					errs <- err
					return
				}
				posted.Add(int64(hi - lo))
			}
		}()
	}
	var err error
feed:
	for b := 0; b*block < n; b++ {
		select {
		case blocks <- b:
		case err = <-errs:
			break feed
		}
	}
	close(blocks)
	wg.Wait()
	close(errs)
	for e := range errs {
		err = errors.Join(err, e)
	}
	return err
}

// post posts message i and returns its id and whether the answer was a replay.
func (c *messagesClient) post(ctx context.Context, i int) (int64, bool, error) {
	status, h, b, err := c.do(ctx, http.MethodPost, "/v1/messages", messageKey(i), messageBody(i))
	if err != nil {
		return 0, false, err
	}
	var m chaosMessage
	if status != http.StatusAccepted || json.Unmarshal(b, &m) != nil || m.ID == 0 {
		return 0, false, fmt.Errorf("chaos-messages: POST /v1/messages %s: %d %s", messageKey(i), status, b)
	}
	return m.ID, h.Get("Idempotent-Replayed") == "true", nil
}

// postBatch posts messages lo…hi-1 in one POST /v1/messages/batch.
func (c *messagesClient) postBatch(ctx context.Context, lo, hi int, ids []int64) error {
	items := make([]map[string]any, 0, hi-lo)
	for i := lo; i < hi; i++ {
		items = append(items, map[string]any{"idempotency_key": messageKey(i), "message": messageBody(i)})
	}
	status, _, b, err := c.do(ctx, http.MethodPost, "/v1/messages/batch", "", map[string]any{"messages": items})
	if err != nil {
		return err
	}
	var out struct {
		Results []struct {
			Status  int          `json:"status"`
			Message chaosMessage `json:"message"`
		} `json:"results"`
	}
	if status != http.StatusOK || json.Unmarshal(b, &out) != nil || len(out.Results) != hi-lo {
		return fmt.Errorf("chaos-messages: POST /v1/messages/batch %d…%d: %d %s", lo, hi-1, status, b)
	}
	for j, r := range out.Results {
		if r.Status != http.StatusAccepted || r.Message.IdempotencyKey != messageKey(lo+j) {
			return fmt.Errorf("chaos-messages: batch item %s answered %d", messageKey(lo+j), r.Status)
		}
		ids[lo+j] = r.Message.ID
	}
	return nil
}

// replay posts up to k keys again after the kills, one batch of 50 among them: each
// must answer the message first accepted, the single posts with Idempotent-Replayed;
// and a used key with another body must be refused. It returns the keys replayed.
func (c *messagesClient) replay(ctx context.Context, ids []int64, k int) (int, error) {
	k = min(k, len(ids))
	if k == 0 {
		return 0, nil
	}
	lo := rand.IntN(len(ids) - min(50, k) + 1)
	hi := lo + min(50, k)
	again := make([]int64, len(ids))
	if err := c.postBatch(ctx, lo, hi, again); err != nil {
		return 0, err
	}
	for i := lo; i < hi; i++ {
		if again[i] != ids[i] {
			return 0, fmt.Errorf("chaos-messages: batch replay of %s answered message %d, first %d", messageKey(i), again[i], ids[i])
		}
	}
	for range k - (hi - lo) {
		i := rand.IntN(len(ids))
		id, replayed, err := c.post(ctx, i)
		if err != nil {
			return 0, err
		}
		if id != ids[i] || !replayed {
			return 0, fmt.Errorf("chaos-messages: replay of %s answered message %d (replayed %v), first %d", messageKey(i), id, replayed, ids[i])
		}
	}
	other := messageBody(0)
	other["subject"] = "Another receipt"
	status, _, b, err := c.do(ctx, http.MethodPost, "/v1/messages", messageKey(0), other)
	if err != nil {
		return 0, err
	}
	if status != http.StatusUnprocessableEntity {
		return 0, fmt.Errorf("chaos-messages: a used key with another body answered %d %s, want 422", status, b)
	}
	return k, nil
}

// listAll reads every message of the account through GET /v1/messages, by key.
func (c *messagesClient) listAll(ctx context.Context) (map[string]chaosMessage, error) {
	out := map[string]chaosMessage{}
	cursor := ""
	for {
		path := "/v1/messages?limit=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		status, _, b, err := c.do(ctx, http.MethodGet, path, "", nil)
		if err != nil {
			return nil, err
		}
		var page struct {
			Data       []chaosMessage `json:"data"`
			NextCursor *string        `json:"next_cursor"`
		}
		if status != http.StatusOK || json.Unmarshal(b, &page) != nil {
			return nil, fmt.Errorf("chaos-messages: GET %s: %d %s", path, status, b)
		}
		for _, m := range page.Data {
			out[m.IdempotencyKey] = m
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return out, nil
		}
		cursor = *page.NextCursor
	}
}
