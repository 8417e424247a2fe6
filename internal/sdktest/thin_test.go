package sdktest_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// TestCommonPathThroughTheServices walks the SDK's resource services against the real
// service: a subscriber, a list, a campaign approved and sent, a transactional
// message sent twice under one key, and the typed events all of it wrote — a
// campaign's send.sent names its subscriber, a message's names the message.
func TestCommonPathThroughTheServices(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(client.Config{URL: os.Getenv("SENDONCE_URL"), APIKey: os.Getenv("SENDONCE_API_KEY")})
	require.NoError(t, err)
	start := cursorAfterAll(ctx, t, c)

	sub, err := c.Subscribers.Create(ctx, &client.SubscriberCreate{Email: "thin@example.org",
		Status: client.Ptr(client.SubscriberCreateStatusConfirmed)})
	require.NoError(t, err)
	got, err := c.Subscribers.Get(ctx, sub.Id)
	require.NoError(t, err)
	require.Equal(t, "thin@example.org", got.Email)

	// Refusals are typed: status, problem type, detail and the fields named.
	_, err = c.Subscribers.Get(ctx, 1<<40)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 404, e.Status)
	require.Equal(t, "https://sendonce.dev/problems/not_found", e.Type)
	_, err = c.Subscribers.Create(ctx, &client.SubscriberCreate{Email: "not an address"})
	require.ErrorAs(t, err, &e)
	require.Equal(t, 422, e.Status)
	require.Contains(t, e.Fields, "/email")
	require.NotEmpty(t, e.Detail)

	page, err := c.Subscribers.List(ctx, &client.ListSubscribersParams{Email: client.Ptr("thin@")})
	require.NoError(t, err)
	require.Len(t, page.Data, 1)

	list, err := c.CreateListWithResponse(ctx, nil, client.ListCreate{Name: "thin"})
	require.NoError(t, client.Check(list, err))
	members, err := c.AddListMembersWithResponse(ctx, list.JSON201.Id, nil, client.MemberIDs{SubscriberIds: []int64{sub.Id}})
	require.NoError(t, client.Check(members, err))

	camp, err := c.Campaigns.Create(ctx, &client.CampaignCreate{Name: "thin", FromEmail: "news@example.org",
		Subject: client.Ptr("Hello"), TextTemplate: client.Ptr("Hi"), ListIds: &[]int64{list.JSON201.Id}})
	require.NoError(t, err)
	require.Equal(t, "draft", string(camp.Status))
	approved, err := c.Campaigns.Approve(ctx, camp.Id, nil)
	require.NoError(t, err)
	require.Equal(t, "approved", string(approved.Status))
	_, err = c.Campaigns.Approve(ctx, camp.Id, nil)
	require.ErrorAs(t, err, &e)
	require.Equal(t, 409, e.Status)

	// A message sent twice under one key is one message.
	msg, err := c.Messages.Send(ctx, &client.MessageCreate{From: "shop@example.org", To: "buyer@example.org",
		Subject: client.Ptr("Receipt"), Text: client.Ptr("Thanks")}, client.Key("thin-receipt-1"))
	require.NoError(t, err)
	again, err := c.Messages.Send(ctx, &client.MessageCreate{From: "shop@example.org", To: "buyer@example.org",
		Subject: client.Ptr("Receipt"), Text: client.Ptr("Thanks")}, client.Key("thin-receipt-1"))
	require.NoError(t, err)
	require.Equal(t, msg.Id, again.Id)

	// The events, typed: wait for the campaign's send.sent and the message's.
	var campaignSend *client.SendSentEvent
	var messageSend *client.SendSentEvent
	var approvedEvent *client.CampaignApprovedEvent
	for campaignSend == nil || messageSend == nil {
		for ev, err := range c.Events.Iter(ctx, client.ListEventsParams{After: &start}) {
			require.NoError(t, err)
			p, err := ev.Payload()
			require.NoError(t, err, "event %s of type %s", ev.Id, ev.Type)
			switch e := p.(type) {
			case client.SendSentEvent:
				if e.Data.CampaignId == camp.Id {
					campaignSend = &e
				}
				if e.Data.MessageId != nil && *e.Data.MessageId == msg.Id {
					messageSend = &e
				}
			case client.CampaignApprovedEvent:
				if e.Data.CampaignId == camp.Id {
					approvedEvent = &e
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("events never came: campaign send %v, message send %v", campaignSend, messageSend)
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.NotNil(t, approvedEvent)
	require.Equal(t, "thin", approvedEvent.Data.Name)
	require.Equal(t, "thin@example.org", campaignSend.Data.Email)
	require.Equal(t, &sub.Id, campaignSend.Data.SubscriberId)
	require.Nil(t, campaignSend.Data.MessageId)
	require.Equal(t, "buyer@example.org", messageSend.Data.Email)
	require.Nil(t, messageSend.Data.SubscriberId, "a message's send.sent names no subscriber")

	sent, err := c.Messages.Get(ctx, msg.Id)
	require.NoError(t, err)
	require.Equal(t, "sent", string(sent.Status))
	final, err := c.Campaigns.Get(ctx, camp.Id)
	require.NoError(t, err)
	require.Contains(t, []string{"sending", "sent"}, string(final.Status))
	require.False(t, errors.Is(err, client.ErrUnknownEventType))
}

// cursorAfterAll returns the cursor after the newest readable event (empty when none).
func cursorAfterAll(ctx context.Context, t *testing.T, c *client.Client) string {
	t.Helper()
	after := ""
	for {
		p, err := c.Events.List(ctx, &client.ListEventsParams{After: &after, Limit: client.Ptr(500)})
		require.NoError(t, err)
		if len(p.Data) == 0 || p.NextCursor == nil {
			return after
		}
		after = *p.NextCursor
	}
}
