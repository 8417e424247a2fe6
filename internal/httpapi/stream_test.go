package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/postgres"
)

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct{ ID, Type, Data string }

// sseStream reads events from an open stream.
type sseStream struct {
	res *http.Response
	rd  *bufio.Reader
}

func openStream(t *testing.T, url string, header ...string) *sseStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	s := &sseStream{res: res, rd: bufio.NewReader(res.Body)}
	// The retry: preamble is written once the starting position is fixed.
	line, err := s.rd.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "retry: 2000\n", line)
	t.Cleanup(func() { res.Body.Close() })
	return s
}

// next returns the next event, skipping comments (heartbeats).
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := s.rd.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && ev.Data != "":
			return ev
		case strings.HasPrefix(line, "id: "):
			ev.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = strings.TrimPrefix(line, "data: ")
		}
	}
}

func emitN(t *testing.T, e *env, account int64, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		require.NoError(t, postgres.InTx(context.Background(), e.pool, func(tx pgx.Tx) error {
			// A send.sent of the shape the executor writes, numbered by its send_id.
			return event.Emit(context.Background(), tx, account, event.SendSent, map[string]any{"campaign_id": 1,
				"send_id": i, "subscriber_id": i, "email": "n@example.com", "status": "sent", "attempts": 1,
				"provider_message_id": "p", "error": nil})
		}))
	}
}

func nOf(t *testing.T, ev sseEvent) int {
	t.Helper()
	var e struct {
		Data struct {
			N int `json:"send_id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &e))
	return e.Data.N
}

// TestEventStreamResumesWithoutGapsOrRepeats: a client reading with a stream token
// disconnects mid-way; reconnecting with Last-Event-ID it gets exactly the events
// after the last one it saw, in order, while events kept being written.
func TestEventStreamResumesWithoutGapsOrRepeats(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.EventStreamPoll = 20 * time.Millisecond })
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	res := e.do(e.keyA, "POST", "/v1/events/stream-tokens", nil)
	require.Equal(t, http.StatusCreated, res.Status)
	tok := decodeAs[struct {
		Token string `json:"token"`
	}](t, res).Token
	account := accountOf(t, e, e.keyA)

	s := openStream(t, srv.URL+"/v1/events/stream?token="+tok)
	emitN(t, e, account, 1, 5)
	var last sseEvent
	for want := 1; want <= 3; want++ {
		last = s.next(t)
		require.Equal(t, event.SendSent, last.Type)
		require.Equal(t, want, nOf(t, last))
	}
	s.res.Body.Close()
	emitN(t, e, account, 6, 10)

	s = openStream(t, srv.URL+"/v1/events/stream?token="+tok, "Last-Event-ID", last.ID)
	for want := 4; want <= 10; want++ {
		require.Equal(t, want, nOf(t, s.next(t)))
	}
	// The pull API agrees, from the same cursor.
	page := e.do(e.keyA, "GET", "/v1/events?limit=3&after="+last.ID, nil)
	require.Equal(t, http.StatusOK, page.Status)
	var p struct {
		Data []struct {
			Data struct {
				N int `json:"send_id"`
			} `json:"data"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal(page.Body, &p))
	require.Len(t, p.Data, 3)
	require.Equal(t, 4, p.Data[0].Data.N)
	require.NotNil(t, p.NextCursor)
}

// TestEventStreamTenant: a stream shows only its own account's events, and a token
// opens the stream only: it is no API key.
func TestEventStreamTenant(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.EventStreamPoll = 20 * time.Millisecond })
	srv := httptest.NewServer(e.handler)
	t.Cleanup(srv.Close)
	a, b := accountOf(t, e, e.keyA), accountOf(t, e, e.keyB)
	s := openStream(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyB)
	emitN(t, e, a, 1, 3)
	emitN(t, e, b, 100, 100)
	require.Equal(t, 100, nOf(t, s.next(t)), "B's stream skips A's events")

	res := e.do(e.keyB, "POST", "/v1/events/stream-tokens", nil)
	tok := decodeAs[struct {
		Token string `json:"token"`
	}](t, res).Token
	require.Equal(t, http.StatusUnauthorized, e.do(tok, "GET", "/v1/events", nil).Status)
	bad, err := http.Get(srv.URL + "/v1/events/stream?token=est_forged")
	require.NoError(t, err)
	bad.Body.Close()
	require.Equal(t, http.StatusUnauthorized, bad.StatusCode)
	// A's cursor is no cursor of B's.
	page := e.do(e.keyA, "GET", "/v1/events", nil)
	var p struct {
		NextCursor string `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal(page.Body, &p))
	require.Equal(t, http.StatusUnprocessableEntity, e.do(e.keyB, "GET", "/v1/events?after="+p.NextCursor, nil).Status)
}

func accountOf(t *testing.T, e *env, key string) int64 {
	t.Helper()
	res := e.do(key, "GET", "/v1/account", nil)
	require.Equal(t, http.StatusOK, res.Status)
	return decodeAs[struct {
		ID int64 `json:"id"`
	}](t, res).ID
}

// TestEventStreamHostileParameters: every parameter of the stream, given hostile
// text, is a 4xx problem before the stream starts (the generated walk skips this
// route, whose valid requests never end).
func TestEventStreamHostileParameters(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, h := range hostileParams {
		for _, c := range []struct {
			query, header, key string
		}{
			{query: "after=" + h.value, key: e.keyA},
			{query: "type=" + h.value, key: e.keyA},
			{query: "token=" + h.value},
			{header: h.value, key: e.keyA},
		} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/events/stream?"+c.query, nil)
			if c.key != "" {
				req.Header.Set("Authorization", "Bearer "+c.key)
			}
			if c.header != "" {
				v, err := url.QueryUnescape(c.header)
				require.NoError(t, err)
				req.Header.Set("Last-Event-ID", v)
			}
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			cancel()
			what := fmt.Sprintf("%s: ?%.40s Last-Event-ID %.40q", h.name, c.query, c.header)
			requireProblem4xx(t, response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}, what)
		}
	}
}

// TestEventStreamOutlivesTheWriteTimeout: the server's write timeout would cut any
// other response; the stream clears it and goes on delivering.
func TestEventStreamOutlivesTheWriteTimeout(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.EventStreamPoll = 20 * time.Millisecond })
	srv := httptest.NewUnstartedServer(e.handler)
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	account := accountOf(t, e, e.keyA)
	opened := time.Now()
	s := openStream(t, srv.URL+"/v1/events/stream", "Authorization", "Bearer "+e.keyA)
	// Event after event arrives, until the stream has lived three write timeouts:
	// the last ones were written past the deadline the server would have set.
	for i := 1; time.Since(opened) < 3*srv.Config.WriteTimeout; i++ {
		emitN(t, e, account, i, i)
		require.Equal(t, i, nOf(t, s.next(t)))
	}
}
