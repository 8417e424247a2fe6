package sdktest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/sendonce/sendonce/client"
)

// newClient is how a program makes its client: from the environment.
func newClient() *client.Client {
	c, err := client.New(client.Config{URL: os.Getenv("SENDONCE_URL"), APIKey: os.Getenv("SENDONCE_API_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	return c
}

// Create a subscriber; a second create of the address answers 409, an *Error with
// the status, the problem's type and its detail.
func Example_subscriber() {
	ctx := context.Background()
	c := newClient()
	s, err := c.Subscribers.Create(ctx, &client.SubscriberCreate{Email: "ada@example.com", Name: client.Ptr("Ada Lovelace")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Email, s.Status)

	_, err = c.Subscribers.Create(ctx, &client.SubscriberCreate{Email: "ADA@example.com"})
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Type)
	}
	// Output:
	// ada@example.com pending
	// 409 https://sendonce.dev/problems/conflict
}

// Walk a listing page by page without handling cursors.
func Example_subscribers() {
	ctx := context.Background()
	c := newClient()
	rows := client.ImportSubscribersJSONRequestBody{}
	for _, e := range []string{"page1@example.org", "page2@example.org", "page3@example.org"} {
		rows = append(rows, client.SubscriberImportRow{Email: client.Ptr(e), Status: client.Ptr("confirmed")})
	}
	imp, err := c.ImportSubscribersWithResponse(ctx, nil, rows)
	if err := client.Check(imp, err); err != nil {
		log.Fatal(err)
	}
	// Two per page, so the loop crosses two pages.
	for s, err := range c.Subscribers.Iter(ctx, client.ListSubscribersParams{Limit: client.Ptr(2), Email: client.Ptr("page")}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(s.Email, s.Status)
	}
	// Output:
	// page1@example.org confirmed
	// page2@example.org confirmed
	// page3@example.org confirmed
}

// Follow the account's events as they happen, typed. A stream starts now, or after
// a cursor: here the cursor after the first suppression's event, so the loop cannot
// miss the second however late it connects.
func Example_stream() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newClient()
	suppress := func(email string) {
		resp, err := c.AddSuppressionWithResponse(ctx, nil, client.SuppressionCreate{Email: email})
		if err := client.Check(resp, err); err != nil {
			log.Fatal(err)
		}
	}
	suppress("stream-before@example.org")
	after := cursorAfter(ctx, c, "stream-before@example.org")
	suppress("stream@example.org")
	for ev, err := range c.Events.Stream(ctx, client.StreamOptions{Types: []string{"suppression.created"}, After: after}) {
		if err != nil {
			log.Fatal(err)
		}
		p, err := ev.Payload()
		if err != nil {
			log.Fatal(err)
		}
		if e, ok := p.(client.SuppressionCreatedEvent); ok {
			fmt.Println(e.Type, e.Data.Email, e.Data.Reason)
		}
		break
	}
	// Output:
	// suppression.created stream@example.org manual
}

// Check the signature of a delivery to your event endpoint (Standard Webhooks) and
// get its typed events, here the endpoint's ping.
func Example_verify() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newClient()
	secret := make(chan string, 1)
	verified := make(chan []client.Event, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		events, err := client.Verify(r.Header, body, time.Now(), <-secret)
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		verified <- events
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	ep, err := c.CreateEventEndpointWithResponse(ctx, nil, client.EventEndpointInput{Url: client.Ptr(receiver.URL)})
	if err := client.Check(ep, err); err != nil {
		log.Fatal(err)
	}
	secret <- ep.JSON201.Secret
	ping, err := c.PingEventEndpointWithResponse(ctx, ep.JSON201.Id, nil)
	if err := client.Check(ping, err); err != nil {
		log.Fatal(err)
	}
	select {
	case events := <-verified:
		for _, ev := range events {
			p, err := ev.Payload()
			if err != nil {
				log.Fatal(err)
			}
			switch e := p.(type) {
			case client.EndpointPingEvent:
				fmt.Println("ping of endpoint", e.Data.EndpointId == ep.JSON201.Id)
			default:
				fmt.Println("another event:", ev.Type)
			}
		}
	case <-ctx.Done():
		log.Fatal("no delivery")
	}
	_, err = client.Verify(http.Header{"Webhook-Id": {"evt_forged"}, "Webhook-Timestamp": {"1"}, "Webhook-Signature": {"v1,AAAA"}}, nil, time.Now(), ep.JSON201.Secret)
	fmt.Println(err)
	// Output:
	// ping of endpoint true
	// sendonce: webhook signature does not verify
}

// cursorAfter waits until the event log shows the suppression of email (an event is
// listed once every transaction older than it has ended) and returns the cursor
// after it.
func cursorAfter(ctx context.Context, c *client.Client, email string) string {
	for {
		after, seen := "", false
		for {
			page, err := c.ListEventsWithResponse(ctx, &client.ListEventsParams{Limit: client.Ptr(500), After: &after,
				Type: &client.EventTypeFilter{"suppression.created"}})
			if err := client.Check(page, err); err != nil {
				log.Fatal(err)
			}
			for _, ev := range page.JSON200.Data {
				seen = seen || ev.Data["email"] == email
			}
			if len(page.JSON200.Data) == 0 || page.JSON200.NextCursor == nil {
				break
			}
			after = *page.JSON200.NextCursor
		}
		if seen {
			return after
		}
		select {
		case <-ctx.Done():
			log.Fatal("the event never showed: ", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
