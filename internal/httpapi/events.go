package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
)

// createEventEndpoint answers POST /v1/event-endpoints; the secret is in this
// response and never again.
func (s *Server) createEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[event.EndpointInput](w, r, s.Config.MaxBodyBytes)
	if err != nil {
		return err
	}
	ep, secret, err := s.Events.Create(r.Context(), accountID(r), in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, eventEndpointWithSecret{Endpoint: ep, Secret: secret})
}

type eventEndpointWithSecret struct {
	event.Endpoint
	Secret string `json:"secret"`
	// PreviousSecretExpiresAt is when the secret a rotation replaced stops signing.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at,omitempty"`
}

// listEventEndpoints answers GET /v1/event-endpoints.
func (s *Server) listEventEndpoints(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "event-endpoints")
	if err != nil {
		return err
	}
	eps, err := s.Events.List(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	eps, next := pageOf(r, "event-endpoints", p, eps, func(e event.Endpoint) cursor { return cursor{ID: e.ID} })
	return encode(w, http.StatusOK, map[string]any{"data": eps, "next_cursor": next})
}

// getEventEndpoint answers GET /v1/event-endpoints/{id}.
func (s *Server) getEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	ep, err := s.Events.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, ep)
}

// updateEventEndpoint answers PATCH /v1/event-endpoints/{id}.
func (s *Server) updateEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	in, err := decode[event.EndpointInput](w, r, s.Config.MaxBodyBytes)
	if err != nil {
		return err
	}
	ep, err := s.Events.Update(r.Context(), accountID(r), id, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, ep)
}

// deleteEventEndpoint answers DELETE /v1/event-endpoints/{id}.
func (s *Server) deleteEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	if err := s.Events.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// rotateEventEndpoint answers POST /v1/event-endpoints/{id}/rotate.
func (s *Server) rotateEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	var in struct {
		GraceSeconds *int64 `json:"grace_seconds"`
	}
	if r.ContentLength != 0 {
		if in, err = decode[struct {
			GraceSeconds *int64 `json:"grace_seconds"`
		}](w, r, s.Config.MaxBodyBytes); err != nil {
			return err
		}
	}
	grace := event.DefaultGrace
	if in.GraceSeconds != nil {
		if *in.GraceSeconds < 0 || *in.GraceSeconds > 30*86400 {
			return apperr.Invalidf("/grace_seconds", "grace_seconds must be between 0 and 2592000")
		}
		grace = time.Duration(*in.GraceSeconds) * time.Second
	}
	ep, secret, exp, err := s.Events.Rotate(r.Context(), accountID(r), id, grace)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, eventEndpointWithSecret{Endpoint: ep, Secret: secret, PreviousSecretExpiresAt: exp})
}

// pingEventEndpoint answers POST /v1/event-endpoints/{id}/ping: an endpoint.ping
// event delivered to this endpoint only; the outcome is in its delivery log.
func (s *Server) pingEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	evID, err := s.Events.Ping(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusAccepted, map[string]string{"event_id": evID})
}

// listEventEndpointDeliveries answers GET /v1/event-endpoints/{id}/deliveries, newest first.
func (s *Server) listEventEndpointDeliveries(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	p, err := parsePage(r, "event-deliveries")
	if err != nil {
		return err
	}
	ds, err := s.Events.Deliveries(r.Context(), accountID(r), id, p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	ds, next := pageOf(r, "event-deliveries", p, ds, func(d event.Delivery) cursor { return cursor{ID: d.ID} })
	return encode(w, http.StatusOK, map[string]any{"data": ds, "next_cursor": next})
}

// redeliverEventEndpoint answers POST /v1/event-endpoints/{id}/redeliver with
// either {"event_id": "evt_…"} (one event once more) or {"since": time} (every
// event since then, through the ordinary fan-out).
func (s *Server) redeliverEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	in, err := decode[struct {
		EventID *string    `json:"event_id"`
		Since   *time.Time `json:"since"`
	}](w, r, s.Config.MaxBodyBytes)
	if err != nil {
		return err
	}
	switch {
	case (in.EventID == nil) == (in.Since == nil):
		return apperr.Invalidf("/event_id", "give exactly one of event_id and since")
	case in.EventID != nil:
		evID, ok := event.ParseEventID(*in.EventID)
		if !ok {
			return apperr.Invalidf("/event_id", "event_id must look like evt_123")
		}
		if err := s.Events.RedeliverEvent(r.Context(), accountID(r), id, evID); err != nil {
			return err
		}
		return encode(w, http.StatusAccepted, map[string]any{"queued": true})
	}
	queued, err := s.Events.RedeliverSince(r.Context(), accountID(r), id, *in.Since)
	if err != nil {
		return err
	}
	return encode(w, http.StatusAccepted, map[string]any{"queued": queued})
}

// listEvents answers GET /v1/events?after=&type=&limit=: the account's events in
// reading order. next_cursor is the position after the last event returned (null
// when none was): poll again with it; an empty page means nothing newer yet.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "events")
	if err != nil {
		return err
	}
	after, err := eventPosition(r, r.URL.Query().Get("after"))
	if err != nil {
		return err
	}
	evs, err := s.Events.Events(r.Context(), accountID(r), after, eventTypes(r), p.Limit)
	if err != nil {
		return err
	}
	var next *string
	if len(evs) > 0 {
		c := eventCursor(accountID(r), evs[len(evs)-1].Position)
		next = &c
	}
	return encode(w, http.StatusOK, map[string]any{"data": evs, "next_cursor": next})
}

// createEventStreamToken answers POST /v1/events/stream-tokens.
func (s *Server) createEventStreamToken(w http.ResponseWriter, r *http.Request) error {
	token, exp, err := s.Events.StreamToken(r.Context(), accountID(r),
		event.Authority{KeyID: apiKeyID(r), SessionID: sessionID(r)})
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, map[string]any{"token": token, "expires_at": exp})
}

// eventCursor encodes a reading position; the stream's id: field carries the same.
func eventCursor(account int64, p event.Position) string {
	return encodeCursor(cursor{Account: account, Listing: "events", ID: p.ID, Key: strconv.FormatInt(p.Xid, 10)})
}

// eventPosition decodes an events cursor ("" is the beginning).
func eventPosition(r *http.Request, s string) (event.Position, error) {
	if s == "" {
		return event.Position{}, nil
	}
	c, err := decodeCursor(s, accountID(r), "events")
	if err != nil {
		return event.Position{}, apperr.Invalidf("/after", "after is not a cursor of this account's events")
	}
	xid, err := strconv.ParseInt(c.Key, 10, 64)
	if err != nil || xid < 0 {
		return event.Position{}, apperr.Invalidf("/after", "after is not a cursor of this account's events")
	}
	return event.Position{Xid: xid, ID: c.ID}, nil
}

// eventTypes reads ?type=, repeated or comma separated.
func eventTypes(r *http.Request) []string {
	var out []string
	for _, v := range r.URL.Query()["type"] {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}
