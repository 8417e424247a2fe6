package client

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ErrUnknownEventType is returned by Payload for an event type this SDK does not
// know: a newer service's. Skip such events (new types come in minor releases).
var ErrUnknownEventType = errors.New("sendonce: unknown event type")

// Payload returns the event as the value of its type — CampaignApprovedEvent,
// SendSentEvent, SubscriberUnsubscribedEvent, … (one per EventType, each with its
// typed Data) — to switch on:
//
//	p, err := ev.Payload()
//	switch e := p.(type) {
//	case client.SendSentEvent:
//		fmt.Println(e.Data.Email, e.Data.ProviderMessageId)
//	case client.SubscriberUnsubscribedEvent:
//		…
//	}
//
// An event of a type this SDK does not know returns an error wrapping
// ErrUnknownEventType.
func (e Event) Payload() (any, error) {
	if !e.Type.Valid() {
		return nil, fmt.Errorf("%w %q", ErrUnknownEventType, e.Type)
	}
	if e.union == nil { // an Event built in Go rather than decoded: take its fields
		b, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		if err := e.UnmarshalJSON(b); err != nil {
			return nil, err
		}
	}
	return e.ValueByDiscriminator()
}

// batchType is the type of a delivery carrying several events (an endpoint whose
// batch_size is above 1).
const batchType = "event.batch"

// decodeDelivery reads a delivery's body: one event, or a batch envelope's events.
func decodeDelivery(body []byte) ([]Event, error) {
	var head struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("sendonce: delivery body: %w", err)
	}
	if head.Type == batchType {
		var evs []Event
		if err := json.Unmarshal(head.Data, &evs); err != nil {
			return nil, fmt.Errorf("sendonce: batch delivery: %w", err)
		}
		return evs, nil
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("sendonce: delivery body: %w", err)
	}
	return []Event{ev}, nil
}
