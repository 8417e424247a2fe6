package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/postgres"
)

// TestEventStreamEndsOnEveryReplicaWhenItsKeyIsRevoked: two replicas on one
// database, the first serving the API only (no executor, so no LISTEN of the
// executor's); a stream opened on the first with a key, and one with a stream
// token the key minted, end at once when the key is revoked through the second,
// and send nothing that committed after the revocation. The recheck is an hour:
// only the revocation's notification can end them within the limit. Before the
// fix both streams ran on and sent the later events.
func TestEventStreamEndsOnEveryReplicaWhenItsKeyIsRevoked(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acct, admin, err := account.NewService(pool).Create(ctx, "acme")
	require.NoError(t, err)
	tweak := func(c *config.Config) {
		c.EventStreamPoll = 20 * time.Millisecond
		c.EventStreamRecheck = time.Hour
	}
	first := startServiceWith(t, pool.Config().ConnString(), testWriter{t}, Options{API: true}, tweak)
	second := startService(t, pool.Config().ConnString(), tweak)

	var key struct {
		ID    int64  `json:"id"`
		Token string `json:"token"`
	}
	call(t, http.MethodPost, first+"/v1/api-keys", admin, `{"name":"watcher"}`, http.StatusCreated, &key)
	var tok struct {
		Token string `json:"token"`
	}
	call(t, http.MethodPost, first+"/v1/events/stream-tokens", key.Token, "", http.StatusCreated, &tok)
	byKey := openSSE(t, first+"/v1/events/stream", key.Token)
	byToken := openSSE(t, first+"/v1/events/stream?token="+tok.Token, "")

	emit := func(n int) {
		require.NoError(t, postgres.InTx(ctx, pool, func(tx pgx.Tx) error {
			return event.Emit(ctx, tx, acct.ID, event.SendSent, map[string]any{"n": n})
		}))
	}
	emit(1)
	require.Equal(t, []int{1}, byKey.until(t, 1))
	require.Equal(t, []int{1}, byToken.until(t, 1))

	call(t, http.MethodDelete, fmt.Sprint(second, "/v1/api-keys/", key.ID), admin, "", http.StatusOK, nil)
	emit(2)
	emit(3)
	require.Empty(t, byKey.rest(t, 10*time.Second), "the key's stream sends nothing committed after the revocation")
	require.Empty(t, byToken.rest(t, 10*time.Second), "nor does its token's")
}

// call sends one request with key and decodes the answer into out (when not nil).
func call(t *testing.T, method, url, key, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, want, res.StatusCode, "%s %s: %s", method, url, b)
	if out != nil {
		require.NoError(t, json.Unmarshal(b, out))
	}
}

// sse is an open event stream whose events are read in the background.
type sse struct {
	ns   chan int
	done chan error
}

func openSSE(t *testing.T, url, key string) *sse {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	t.Cleanup(func() { res.Body.Close() })
	s := &sse{ns: make(chan int, 100), done: make(chan error, 1)}
	go func() {
		rd := bufio.NewReader(res.Body)
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				close(s.ns)
				s.done <- err
				return
			}
			if data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: "); ok {
				var e struct {
					Data struct {
						N int `json:"n"`
					} `json:"data"`
				}
				_ = json.Unmarshal([]byte(data), &e)
				s.ns <- e.Data.N
			}
		}
	}()
	return s
}

// until returns the next k events' n.
func (s *sse) until(t *testing.T, k int) []int {
	t.Helper()
	var out []int
	for len(out) < k {
		select {
		case n, ok := <-s.ns:
			require.True(t, ok, "the stream ended early")
			out = append(out, n)
		case <-time.After(30 * time.Second):
			t.Fatalf("no event within 30s")
		}
	}
	return out
}

// rest returns what the stream sends until the server ends it, failing when it
// still runs after limit.
func (s *sse) rest(t *testing.T, limit time.Duration) []int {
	t.Helper()
	var out []int
	deadline := time.After(limit)
	for {
		select {
		case n, ok := <-s.ns:
			if !ok {
				require.NoError(t, <-s.done)
				return out
			}
			out = append(out, n)
		case <-deadline:
			t.Fatalf("the stream still runs %s after its key was revoked; it sent %v", limit, out)
		}
	}
}
