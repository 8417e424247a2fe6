package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// StreamOptions selects what Stream reads.
type StreamOptions struct {
	// Types keeps only events of these types; empty means every type.
	Types []string
	// After starts after this cursor (an event's StreamEvent.ID or a listing's
	// next_cursor); empty means events from now on.
	After string
	// Reconnects is how many times in a row a broken stream is reopened before Stream
	// yields the error; 0 means 10, negative means never.
	Reconnects int
}

// StreamEvent is one event of the stream and its position.
type StreamEvent struct {
	// ID is the event's stream position: pass it as StreamOptions.After to resume.
	ID string
	Event
}

// Stream yields the account's events as they happen (GET /v1/events/stream,
// Server-Sent Events). When the connection breaks it reconnects with
// Last-Event-ID, so no event is missed or repeated; it ends when ctx is done (without
// an error), when the loop stops, or with the error of the last failed reconnect.
func (c *Client) Stream(ctx context.Context, opts StreamOptions) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		reconnects := opts.Reconnects
		if reconnects == 0 {
			reconnects = 10
		}
		last := opts.After
		failures := 0
		for {
			got, err := c.streamOnce(ctx, opts.Types, last, func(ev StreamEvent) bool {
				last = ev.ID
				return yield(ev, nil)
			})
			if ctx.Err() != nil || errors.Is(err, errStop) {
				return
			}
			if got {
				failures = 0
			}
			var apiErr *Error
			if errors.As(err, &apiErr) && apiErr.Status < 500 && apiErr.Status != http.StatusTooManyRequests {
				yield(StreamEvent{}, err) // a refusal (401, 422): reconnecting will not help
				return
			}
			failures++
			if reconnects < 0 || failures > reconnects {
				if err == nil {
					err = errors.New("sendonce: the event stream ended")
				}
				yield(StreamEvent{}, err)
				return
			}
			t := time.NewTimer(wait(failures-1, 5*time.Second))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

var errStop = errors.New("stopped")

// streamOnce reads one connection of the stream until it ends; got reports whether
// it delivered an event.
func (c *Client) streamOnce(ctx context.Context, types []string, last string, yield func(StreamEvent) bool) (got bool, err error) {
	q := url.Values{}
	for _, t := range types {
		q.Add("type", t)
	}
	u := strings.TrimRight(c.cfg.URL, "/") + "/v1/events/stream"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := c.stream.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return false, newError(resp.StatusCode, body)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var id, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data == "" {
				continue
			}
			var ev StreamEvent
			if err := json.Unmarshal([]byte(data), &ev.Event); err != nil {
				return got, fmt.Errorf("sendonce: event %s: %w", id, err)
			}
			ev.ID = id
			data = ""
			got = true
			if !yield(ev) {
				return got, errStop
			}
		case strings.HasPrefix(line, ":"): // a heartbeat comment
		case strings.HasPrefix(line, "id:"):
			id = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		case strings.HasPrefix(line, "data:"):
			data += strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
		}
	}
	return got, sc.Err()
}
