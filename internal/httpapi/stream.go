package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
)

// streamRoute is the event stream's route: the one that takes a stream token.
const streamRoute = "/v1/events/stream"

// streamHeartbeat is the comment line that keeps proxies from closing an idle stream
// (every 15 seconds or so, as the HTML Living Standard suggests for proxies that drop idle connections).
const streamHeartbeat = 15 * time.Second

// streamEvents answers GET /v1/events/stream: the account's events as Server-Sent
// Events, each with `id:` (its cursor), `event:` (its type) and `data:` (the event
// JSON). A reconnect sends Last-Event-ID and resumes after it, in order, with no
// gap and no repeat; without it the stream starts at ?after= or else now. It
// authenticates with the API key, or, for EventSource, which cannot send headers,
// with ?token= from POST /v1/events/stream-tokens, under the same limit of failed
// authentications per address as every other route. It ends at once when its
// API key (or the key that minted its token) is revoked, or the dashboard session
// that minted its token signs out: the revocation is
// notified to every process on commit (Deps.Listener), and the stream never sends
// an event that committed after the revocation, whenever it hears of it (the
// check is in the statement that reads the events). Every EventStreamRecheck it
// also checks its authority again, which ends it once its token has expired (or
// after a revocation whose notification was lost); one key holds at most
// EventStreamsPerKey streams open. The route has no write timeout and no timeout
// middleware: the stream lasts as long as the client stays and its authority holds.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	addr, now := s.clientAddr(r), time.Now()
	if delay := s.authFails.wait(addr, now); delay > 0 {
		s.tooManyRequests(w, r, delay, "too many failed authentications from this address; retry after %d s")
		return nil
	}
	auth, err := s.streamAccount(r)
	if err != nil {
		if apperr.Is(err, apperr.Unauthorized) {
			s.authFails.fail(addr, now)
		}
		return err
	}
	account := auth.account
	r = r.WithContext(context.WithValue(r.Context(), accountKey{}, account))
	types := eventTypes(r)
	if err := event.CheckTypes(types); err != nil {
		return err // before the stream starts, so it is a 422
	}
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = r.URL.Query().Get("after")
	}
	pos, err := eventPosition(r, from)
	if err != nil {
		return err
	}
	if from == "" {
		if pos, err = s.Events.Head(r.Context()); err != nil {
			return err
		}
	}
	if !s.streams.acquire(auth.holder, s.opts.EventStreamsPerKey) {
		s.tooManyRequests(w, r, streamHeartbeat,
			"this API key has as many event streams open as it may; close one, or retry after %d s")
		return nil
	}
	defer s.streams.release(auth.holder)
	woken, unwatch := s.watch.watch(auth.authority)
	defer unwatch()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK) // the GET's status and headers, and no endless body
		return nil
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // zero: no deadline, whatever Server.WriteTimeout says
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return nil
	}
	if rc.Flush() != nil {
		return nil
	}
	poll := time.NewTicker(s.opts.EventStreamPoll)
	defer poll.Stop()
	recheck := time.NewTicker(s.opts.EventStreamRecheck)
	defer recheck.Stop()
	lastWrite := time.Now()
	for {
		evs, next, err := s.Events.StreamEvents(r.Context(), account, auth.authority, pos, types, 500)
		if err != nil {
			if r.Context().Err() == nil {
				s.Logger.WarnContext(r.Context(), "event stream", "err", err)
			}
			return nil // the status is sent; the client reconnects with Last-Event-ID
		}
		var b strings.Builder
		for _, e := range evs {
			data, _ := json.Marshal(e) // compact: no newline inside one data: line
			fmt.Fprintf(&b, "id: %s\nevent: %s\ndata: %s\n\n", eventCursor(account, e.Position), e.Type, data)
		}
		pos = next
		if len(evs) == 0 && time.Since(lastWrite) >= streamHeartbeat {
			b.WriteString(": heartbeat\n\n")
		}
		if b.Len() > 0 {
			if _, err := fmt.Fprint(w, b.String()); err != nil || rc.Flush() != nil {
				return nil
			}
			lastWrite = time.Now()
		}
		if len(evs) == 500 {
			continue
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-poll.C:
			continue
		case <-recheck.C:
		case <-woken:
		}
		if err := auth.recheck(r.Context()); err != nil {
			// The authority is gone (or cannot be checked): end the stream. A
			// reconnect is refused until the client has a valid key or token.
			if r.Context().Err() == nil && !apperr.Is(err, apperr.Unauthorized) {
				s.Logger.WarnContext(r.Context(), "event stream recheck", "err", err)
			}
			_, _ = fmt.Fprint(w, ": closed: the API key was revoked or the stream token expired\n\n")
			_ = rc.Flush()
			return nil
		}
	}
}

// streamAuth is what authenticated a stream: its account, who holds the stream
// for the per-key cap, and how to check again that the authority still holds.
type streamAuth struct {
	account int64
	holder  string
	// authority is the API key behind the stream (the key, or the one that
	// minted the token) and the dashboard session that minted its token, if any.
	authority event.Authority
	recheck   func(context.Context) error
}

// streamAccount authenticates a stream request: a Bearer API key, or a stream
// token, which counts against the key that minted it.
func (s *Server) streamAccount(r *http.Request) (streamAuth, error) {
	if r.Header.Get("Authorization") != "" {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return streamAuth{}, apperr.New(apperr.Unauthorized, "a valid API key is required: Authorization: Bearer <key>")
		}
		token = strings.TrimSpace(token)
		key, err := s.Accounts.AuthenticateKey(r.Context(), token)
		if err != nil {
			return streamAuth{}, err
		}
		if !key.Permissions.Has(access.EventsRead) {
			return streamAuth{}, permissionDenied(access.EventsRead)
		}
		return streamAuth{account: key.AccountID, holder: "key:" + strconv.FormatInt(key.ID, 10),
			authority: event.Authority{KeyID: key.ID},
			recheck: func(ctx context.Context) error {
				_, err := s.Accounts.AuthenticateKey(ctx, token)
				return err
			}}, nil
	}
	token := r.URL.Query().Get("token")
	if token == "" {
		return streamAuth{}, apperr.New(apperr.Unauthorized, "an API key (Authorization: Bearer) or a stream token (?token=) is required")
	}
	account, minted, err := s.Events.StreamTokenAccount(r.Context(), token)
	if err != nil {
		return streamAuth{}, err
	}
	holder := "key:" + strconv.FormatInt(minted.KeyID, 10)
	if minted.KeyID == 0 {
		// A token of a session from a login link, or from before keys were
		// recorded: its own holder.
		sum := sha256.Sum256([]byte(token))
		holder = "token:" + hex.EncodeToString(sum[:])
	}
	return streamAuth{account: account, holder: holder, authority: minted, recheck: func(ctx context.Context) error {
		_, _, err := s.Events.StreamTokenAccount(ctx, token)
		return err
	}}, nil
}

// streamCounts counts the open streams of each holder (an API key) in this process.
type streamCounts struct {
	mu    sync.Mutex
	n     map[string]int
	total int
}

// open is how many streams are open in this process (sendonce_event_streams_open):
// long-lived, they are bounded per key, not by the API's in-flight bound.
func (c *streamCounts) open() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return float64(c.total)
}

// acquire takes one of holder's max streams, or reports that none is left.
func (c *streamCounts) acquire(holder string, max int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	if c.n[holder] >= max {
		return false
	}
	c.n[holder]++
	c.total++
	return true
}

func (c *streamCounts) release(holder string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.n[holder]--; c.n[holder] <= 0 {
		delete(c.n, holder)
	}
}
