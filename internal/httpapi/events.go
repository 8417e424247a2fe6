package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/optional"
)

func toAPIEventEndpoint(e event.Endpoint) api.EventEndpoint {
	return api.EventEndpoint{Id: e.ID, Url: e.URL, Description: e.Description, EventTypes: wireEventTypes(e.EventTypes),
		Enabled: e.Enabled, DisabledReason: e.DisabledReason, BatchSize: e.BatchSize, FailingSince: e.FailingSince,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func toAPIEventEndpointWithSecret(e event.Endpoint, secret string, previousExpires *time.Time) api.EventEndpointWithSecret {
	return api.EventEndpointWithSecret{Id: e.ID, Url: e.URL, Description: e.Description, EventTypes: wireEventTypes(e.EventTypes),
		Enabled: e.Enabled, DisabledReason: e.DisabledReason, BatchSize: e.BatchSize, FailingSince: e.FailingSince,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, Secret: secret, PreviousSecretExpiresAt: previousExpires}
}

func eventEndpointInput(in api.EventEndpointInput) event.EndpointInput {
	var types *[]string
	if in.EventTypes != nil {
		ts := make([]string, len(*in.EventTypes))
		for i, t := range *in.EventTypes {
			ts[i] = string(t) // checked against the catalogue by event.Service
		}
		types = &ts
	}
	return event.EndpointInput{URL: in.Url, Description: in.Description, EventTypes: types, Enabled: in.Enabled,
		BatchSize: in.BatchSize}
}

// wireEventTypes is the wire form of an endpoint's types (never null).
func wireEventTypes(ts []string) []api.EventType {
	out := make([]api.EventType, len(ts))
	for i, t := range ts {
		out[i] = api.EventType(t)
	}
	return out
}

func toAPIEventDelivery(d event.Delivery) api.EventDelivery {
	return api.EventDelivery{Id: d.ID, EventIds: optional.NonNil(d.EventIDs), Batch: d.Batch,
		Status: api.EventDeliveryStatus(d.Status), Attempts: d.Attempts, NextAttemptAt: d.NextAttemptAt,
		LastStatusCode: d.StatusCode, LastError: d.Error, LastLatencyMs: d.LatencyMS, LastAttemptAt: d.LastAttemptAt,
		DeliveredAt: d.DeliveredAt, CreatedAt: d.CreatedAt}
}

// toAPIEvent carries the stored payload over as it is: numbers keep their text
// (json.Number), so an id beyond 2^53 reads here as it does in a delivery.
func toAPIEvent(e event.Event) (api.Event, error) {
	out := api.Event{Id: e.ID, Type: api.EventType(e.Type), Timestamp: e.Timestamp}
	dec := json.NewDecoder(bytes.NewReader(e.Data))
	dec.UseNumber()
	if err := dec.Decode(&out.Data); err != nil {
		return api.Event{}, fmt.Errorf("event %s data: %w", e.ID, err)
	}
	return out, nil
}

// createEventEndpoint answers POST /v1/event-endpoints; the secret is in this
// response and never again.
func (s *Server) createEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.EventEndpointInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	ep, secret, err := s.Events.Create(r.Context(), accountID(r), eventEndpointInput(in))
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPIEventEndpointWithSecret(ep, secret, nil))
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
	out := api.EventEndpointPage{Data: make([]api.EventEndpoint, len(eps)), NextCursor: next}
	for i, x := range eps {
		out.Data[i] = toAPIEventEndpoint(x)
	}
	return encode(w, http.StatusOK, out)
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
	return encode(w, http.StatusOK, toAPIEventEndpoint(ep))
}

// updateEventEndpoint answers PATCH /v1/event-endpoints/{id}.
func (s *Server) updateEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.EventEndpointInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	ep, err := s.Events.Update(r.Context(), accountID(r), id, eventEndpointInput(in))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIEventEndpoint(ep))
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
	var in api.RotateEventEndpointJSONBody
	if r.ContentLength != 0 {
		if in, err = decode[api.RotateEventEndpointJSONBody](w, r, s.opts.MaxBodyBytes); err != nil {
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
	return encode(w, http.StatusOK, toAPIEventEndpointWithSecret(ep, secret, exp))
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
	return encode(w, http.StatusAccepted, api.EventPingResult{EventId: evID})
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
	out := api.EventDeliveryPage{Data: make([]api.EventDelivery, len(ds)), NextCursor: next}
	for i, x := range ds {
		out.Data[i] = toAPIEventDelivery(x)
	}
	return encode(w, http.StatusOK, out)
}

// redeliverEventEndpoint answers POST /v1/event-endpoints/{id}/redeliver with
// either {"event_id": "evt_…"} (one event once more) or {"since": time} (every
// event since then, through the ordinary fan-out).
func (s *Server) redeliverEventEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := webhookEndpointID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.RedeliverEventEndpointJSONBody](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	switch {
	case (in.EventId == nil) == (in.Since == nil):
		return apperr.Invalidf("/event_id", "give exactly one of event_id and since")
	case in.EventId != nil:
		evID, ok := event.ParseEventID(*in.EventId)
		if !ok {
			return apperr.Invalidf("/event_id", "event_id must look like evt_123")
		}
		if err := s.Events.RedeliverEvent(r.Context(), accountID(r), id, evID); err != nil {
			return err
		}
		return encode(w, http.StatusAccepted, api.EventRedeliverResult{Queued: true})
	}
	queued, err := s.Events.RedeliverSince(r.Context(), accountID(r), id, *in.Since)
	if err != nil {
		return err
	}
	return encode(w, http.StatusAccepted, api.EventRedeliverResult{Queued: queued})
}

// listEvents answers GET /v1/events?after=&type=&limit=: the account's events in
// reading order. next_cursor is the position after the last event returned (null
// when none was): poll again with it; an empty page means nothing newer yet.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "events")
	if err != nil {
		return err
	}
	switch r.URL.Query().Get("order") {
	case "", "oldest":
	case "newest":
		return s.listNewestEvents(w, r, p.Limit)
	default:
		return apperr.Invalidf("/order", "order must be oldest or newest")
	}
	after, err := eventPosition(r, r.URL.Query().Get("after"))
	if err != nil {
		return err
	}
	evs, err := s.Events.Events(r.Context(), accountID(r), after, eventTypes(r), p.Limit)
	if err != nil {
		return err
	}
	out := api.EventPage{Data: make([]api.Event, len(evs))}
	for i, x := range evs {
		if out.Data[i], err = toAPIEvent(x); err != nil {
			return err
		}
	}
	if len(evs) > 0 {
		c := eventCursor(accountID(r), evs[len(evs)-1].Position)
		out.NextCursor = &c
	}
	return encode(w, http.StatusOK, out)
}

// listNewestEvents answers GET /v1/events?order=newest: the newest events, newest
// first, with no cursor (a reading position pages forwards only; "recent" is one
// page). after makes no sense with it and is refused rather than ignored.
func (s *Server) listNewestEvents(w http.ResponseWriter, r *http.Request, limit int) error {
	if r.URL.Query().Get("after") != "" {
		return apperr.Invalidf("/after", "after cannot be combined with order=newest")
	}
	evs, err := s.Events.Newest(r.Context(), accountID(r), eventTypes(r), limit)
	if err != nil {
		return err
	}
	out := api.EventPage{Data: make([]api.Event, len(evs))}
	for i, x := range evs {
		if out.Data[i], err = toAPIEvent(x); err != nil {
			return err
		}
	}
	return encode(w, http.StatusOK, out)
}

// createEventStreamToken answers POST /v1/events/stream-tokens.
func (s *Server) createEventStreamToken(w http.ResponseWriter, r *http.Request) error {
	token, exp, err := s.Events.StreamToken(r.Context(), accountID(r),
		event.Authority{KeyID: apiKeyID(r), SessionID: sessionID(r)})
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, api.EventStreamToken{Token: token, ExpiresAt: exp})
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
