// Package client is the Go SDK for the sendonce API.
//
//	go get github.com/sendonce/sendonce/client
//
// The common path is one call per action, returning the resource or an *Error:
//
//	c, err := client.New(client.Config{URL: "http://127.0.0.1:8080", APIKey: os.Getenv("SENDONCE_API_KEY")})
//	sub, err := c.Subscribers.Create(ctx, &client.SubscriberCreate{Email: "ada@example.com"})
//	msg, err := c.Messages.Send(ctx, &client.MessageCreate{From: "shop@example.com", To: "ada@example.com",
//		Subject: client.Ptr("Your receipt"), Text: client.Ptr("Thanks!")}, client.Key("order-1002-receipt"))
//	camp, err := c.Campaigns.Approve(ctx, id, nil)
//	for s, err := range c.Subscribers.Iter(ctx, client.ListSubscribersParams{}) { … }
//
// c.Subscribers (Create, Get, List, Iter), c.Campaigns (Create, Get, Approve, List,
// Iter), c.Messages (Send, Get, List, Iter) and c.Events (List, Iter, Stream) cover
// it. Everything else is a generated method per operation of openapi.yaml on the same
// Client (client.gen.go, by oapi-codegen; `make generate` rewrites it), such as
// c.ListSegmentsWithResponse; Check turns its response into an error.
//
// What the client adds around every call:
//
//   - authentication with the API key;
//   - retries of network errors, 429 and 5xx, honouring Retry-After, with the same
//     Idempotency-Key on every attempt (one is made for a POST that has none; Key sets
//     your own), so a retried POST never does its work twice;
//   - *Error for an answer that is not 2xx: Status, the problem's Type, Detail and
//     Fields (JSON pointer → what is wrong), printed with the detail once;
//   - typed events: Event.Type is an EventType, and Event.Payload returns the event
//     as its type's struct (SendSentEvent, SubscriberUnsubscribedEvent, …) to switch on;
//   - Stream, the account's events as an iterator that reconnects with Last-Event-ID;
//   - Verify, the Standard Webhooks signature check for the deliveries sendonce posts
//     to your endpoints, returning their typed events.
package client
