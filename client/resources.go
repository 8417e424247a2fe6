package client

import (
	"context"
	"errors"
	"iter"
)

// The resource services are the common path in the shape of resend-go and
// stripe-go: one call per action, returning the resource or an *Error, with no
// status codes to know. Every generated operation stays available on Client for
// the rest (c.ListSegmentsWithResponse, …).

// SubscribersService is c.Subscribers.
type SubscribersService struct{ c *Client }

// CampaignsService is c.Campaigns.
type CampaignsService struct{ c *Client }

// MessagesService is c.Messages.
type MessagesService struct{ c *Client }

// EventsService is c.Events.
type EventsService struct{ c *Client }

// result returns what a call answered: its error, an *Error for a status that is
// not 2xx, or the decoded body (an error if a 2xx came without one).
func result[T any, R response](resp R, err error, body func(R) *T) (*T, error) {
	if err := Check(resp, err); err != nil {
		return nil, err
	}
	if v := body(resp); v != nil {
		return v, nil
	}
	return nil, errors.New("sendonce: the answer had no JSON body")
}

// Create adds a subscriber (201). An address the account already has is an *Error
// with Status 409. opts can set the Idempotency-Key (Key); one is made otherwise.
func (s *SubscribersService) Create(ctx context.Context, in *SubscriberCreate, opts ...RequestEditorFn) (*Subscriber, error) {
	resp, err := s.c.CreateSubscriberWithResponse(ctx, nil, *in, opts...)
	return result(resp, err, func(r *CreateSubscriberResponse) *Subscriber { return r.JSON201 })
}

// Get returns subscriber id (an *Error with Status 404 when the account has none).
func (s *SubscribersService) Get(ctx context.Context, id int64) (*Subscriber, error) {
	resp, err := s.c.GetSubscriberWithResponse(ctx, id)
	return result(resp, err, func(r *GetSubscriberResponse) *Subscriber { return r.JSON200 })
}

// List returns one page; pass its NextCursor as params.Cursor for the next, or use Iter.
func (s *SubscribersService) List(ctx context.Context, params *ListSubscribersParams) (*SubscriberPage, error) {
	resp, err := s.c.ListSubscribersWithResponse(ctx, params)
	return result(resp, err, func(r *ListSubscribersResponse) *SubscriberPage { return r.JSON200 })
}

// Iter yields every subscriber that params selects (its Cursor is managed here),
// fetching pages as the loop asks for them:
//
//	for s, err := range c.Subscribers.Iter(ctx, client.ListSubscribersParams{}) { … }
func (s *SubscribersService) Iter(ctx context.Context, params ListSubscribersParams) iter.Seq2[Subscriber, error] {
	return pages(func(cursor *string) ([]Subscriber, *string, error) {
		params.Cursor = cursor
		p, err := s.List(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return p.Data, p.NextCursor, nil
	})
}

// Create adds a draft campaign (201).
func (s *CampaignsService) Create(ctx context.Context, in *CampaignCreate, opts ...RequestEditorFn) (*Campaign, error) {
	resp, err := s.c.CreateCampaignWithResponse(ctx, nil, *in, opts...)
	return result(resp, err, func(r *CreateCampaignResponse) *Campaign { return r.JSON201 })
}

// Get returns campaign id.
func (s *CampaignsService) Get(ctx context.Context, id int64) (*Campaign, error) {
	resp, err := s.c.GetCampaignWithResponse(ctx, id)
	return result(resp, err, func(r *GetCampaignResponse) *Campaign { return r.JSON200 })
}

// Approve approves draft campaign id for sending, now or at in.ScheduledFor (nil in
// means now). A campaign that is not a draft is an *Error with Status 409.
func (s *CampaignsService) Approve(ctx context.Context, id int64, in *ApproveRequest, opts ...RequestEditorFn) (*Campaign, error) {
	if in == nil {
		in = &ApproveRequest{}
	}
	resp, err := s.c.ApproveCampaignWithResponse(ctx, id, nil, *in, opts...)
	return result(resp, err, func(r *ApproveCampaignResponse) *Campaign { return r.JSON200 })
}

// List returns one page of campaigns.
func (s *CampaignsService) List(ctx context.Context, params *ListCampaignsParams) (*CampaignPage, error) {
	resp, err := s.c.ListCampaignsWithResponse(ctx, params)
	return result(resp, err, func(r *ListCampaignsResponse) *CampaignPage { return r.JSON200 })
}

// Iter yields every campaign that params selects.
func (s *CampaignsService) Iter(ctx context.Context, params ListCampaignsParams) iter.Seq2[Campaign, error] {
	return pages(func(cursor *string) ([]Campaign, *string, error) {
		params.Cursor = cursor
		p, err := s.List(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return p.Data, p.NextCursor, nil
	})
}

// Send accepts a transactional message (202) and returns it, queued. The message's
// Idempotency-Key names it for as long as it exists: pass Key("order-1002-receipt")
// so that sending it again (after a crash of yours) returns the same message instead
// of sending another; without one, a random key covers this call's own retries only.
func (s *MessagesService) Send(ctx context.Context, msg *MessageCreate, opts ...RequestEditorFn) (*Message, error) {
	params := &SendMessageParams{IdempotencyKey: NewIdempotencyKey()}
	resp, err := s.c.SendMessageWithResponse(ctx, params, *msg, opts...) // a Key in opts replaces the header
	return result(resp, err, func(r *SendMessageResponse) *Message { return r.JSON202 })
}

// Get returns message id, with its status.
func (s *MessagesService) Get(ctx context.Context, id int64) (*Message, error) {
	resp, err := s.c.GetMessageWithResponse(ctx, id)
	return result(resp, err, func(r *GetMessageResponse) *Message { return r.JSON200 })
}

// List returns one page of messages.
func (s *MessagesService) List(ctx context.Context, params *ListMessagesParams) (*MessagePage, error) {
	resp, err := s.c.ListMessagesWithResponse(ctx, params)
	return result(resp, err, func(r *ListMessagesResponse) *MessagePage { return r.JSON200 })
}

// Iter yields every message that params selects.
func (s *MessagesService) Iter(ctx context.Context, params ListMessagesParams) iter.Seq2[Message, error] {
	return pages(func(cursor *string) ([]Message, *string, error) {
		params.Cursor = cursor
		p, err := s.List(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		return p.Data, p.NextCursor, nil
	})
}

// List returns one page of the account's stored events, oldest first from
// params.After. An empty page means nothing newer yet: keep your cursor.
func (s *EventsService) List(ctx context.Context, params *ListEventsParams) (*EventPage, error) {
	resp, err := s.c.ListEventsWithResponse(ctx, params)
	return result(resp, err, func(r *ListEventsResponse) *EventPage { return r.JSON200 })
}

// Iter yields the stored events from params.After up to the newest readable one,
// then ends (events listings continue with after=, not cursor=). Switch on each
// event's Payload for its typed data.
func (s *EventsService) Iter(ctx context.Context, params ListEventsParams) iter.Seq2[Event, error] {
	return pages(func(after *string) ([]Event, *string, error) {
		if after != nil {
			params.After = after
		}
		p, err := s.List(ctx, &params)
		if err != nil {
			return nil, nil, err
		}
		if len(p.Data) == 0 {
			return nil, nil, nil // the log's end
		}
		return p.Data, p.NextCursor, nil
	})
}

// Stream is c.Stream: the account's events as they happen.
func (s *EventsService) Stream(ctx context.Context, opts StreamOptions) iter.Seq2[StreamEvent, error] {
	return s.c.Stream(ctx, opts)
}
