package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
)

// streamHeartbeat is the comment line that keeps proxies from closing an idle stream
// (every 15 seconds or so, as the HTML Living Standard suggests for proxies that drop idle connections).
const streamHeartbeat = 15 * time.Second

// streamEvents answers GET /v1/events/stream: the account's events as Server-Sent
// Events, each with `id:` (its cursor), `event:` (its type) and `data:` (the event
// JSON). A reconnect sends Last-Event-ID and resumes after it, in order, with no
// gap and no repeat; without it the stream starts at ?after= or else now. It
// authenticates with the API key, or, for EventSource, which cannot send headers,
// with ?token= from POST /v1/events/stream-tokens. The route has no write timeout
// and no timeout middleware: the stream lasts as long as the client stays.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	account, err := s.streamAccount(r)
	if err != nil {
		return err
	}
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
	poll := time.NewTicker(s.Config.EventStreamPoll)
	defer poll.Stop()
	lastWrite := time.Now()
	for {
		evs, err := s.Events.Events(r.Context(), account, pos, types, 500)
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
			pos = e.Position
		}
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
		}
	}
}

// streamAccount authenticates a stream request: a Bearer API key, or a stream token.
func (s *Server) streamAccount(r *http.Request) (int64, error) {
	if r.Header.Get("Authorization") != "" {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return 0, apperr.New(apperr.Unauthorized, "a valid API key is required: Authorization: Bearer <key>")
		}
		return s.Accounts.Authenticate(r.Context(), strings.TrimSpace(token))
	}
	token := r.URL.Query().Get("token")
	if token == "" {
		return 0, apperr.New(apperr.Unauthorized, "an API key (Authorization: Bearer) or a stream token (?token=) is required")
	}
	return s.Events.StreamTokenAccount(r.Context(), token)
}
