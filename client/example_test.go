package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/sendonce/sendonce/client"
)

// These examples show the calls; internal/sdktest runs the same against a real
// service.

// Send a receipt once: the key names the message, so sending it again after a crash
// returns the same message.
func ExampleMessagesService_Send() {
	c, err := client.New(client.Config{URL: os.Getenv("SENDONCE_URL"), APIKey: os.Getenv("SENDONCE_API_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	msg, err := c.Messages.Send(context.Background(), &client.MessageCreate{
		From: "shop@example.com", To: "ada@example.com",
		Subject: client.Ptr("Your receipt"), Text: client.Ptr("Thanks for your order."),
	}, client.Key("order-1002-receipt"))
	var e *client.Error
	if errors.As(err, &e) && e.Status == http.StatusUnprocessableEntity {
		log.Fatalf("refused: %s (fields %v)", e.Detail, e.Fields)
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(msg.Id, msg.Status)
}

// A webhook handler: verify the delivery, then act on each event by its type.
func ExampleVerify() {
	secret := os.Getenv("SENDONCE_WEBHOOK_SECRET") // whsec_…
	http.HandleFunc("/sendonce", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		events, err := client.Verify(r.Header, body, time.Now(), secret)
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		for _, ev := range events {
			p, err := ev.Payload()
			if errors.Is(err, client.ErrUnknownEventType) {
				continue // a type newer than this SDK
			}
			switch e := p.(type) {
			case client.SendFailedEvent:
				log.Printf("%s bounced: %v", e.Data.Email, e.Data.Error)
			case client.SubscriberUnsubscribedEvent:
				log.Printf("%s unsubscribed (%s)", e.Data.Email, e.Data.Source)
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// Read the account's stored events with their typed data.
func ExampleEvent_Payload() {
	ctx := context.Background()
	c, err := client.New(client.Config{URL: os.Getenv("SENDONCE_URL"), APIKey: os.Getenv("SENDONCE_API_KEY")})
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range c.Events.Iter(ctx, client.ListEventsParams{Type: &client.EventTypeFilter{client.EventTypeSendSent}}) {
		if err != nil {
			log.Fatal(err)
		}
		p, err := ev.Payload()
		if err != nil {
			continue
		}
		if e, ok := p.(client.SendSentEvent); ok {
			fmt.Println(e.Data.Email, e.Data.ProviderMessageId)
		}
	}
}
