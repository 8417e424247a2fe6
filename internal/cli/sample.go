package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/sendonce/sendonce/client"
)

// sampleEvent returns a made-up event of type typ as the service would deliver
// it: built from the SDK's typed payload of that type (so it has every field the
// type's schema in openapi.yaml requires, and no other), with the values of
// docs/events.md's catalogue, id and now as its id and timestamp.
func sampleEvent(typ client.EventType, id string, now time.Time) (client.Event, error) {
	now = now.UTC().Truncate(time.Millisecond)
	campaign := func(status string, reason *string) client.CampaignEventData {
		return client.CampaignEventData{CampaignId: 7, Name: "March news", Status: status, Reason: reason}
	}
	send := func(status client.SendEventDataStatus) client.SendEventData {
		d := client.SendEventData{CampaignId: 7, SendId: 901, SubscriberId: client.Ptr(int64(55)), Email: "ada@example.com",
			Status: status, Attempts: client.Ptr(1)}
		switch status {
		case client.SendEventDataStatusSent:
			d.ProviderMessageId = client.Ptr("0100018f-3c1e-7a2b-9d4e-5f6a7b8c9d0e")
		case client.SendEventDataStatusFailed:
			d.Attempts, d.Error = client.Ptr(5), client.Ptr("550 5.1.1 <ada@example.com>: Recipient address rejected: user unknown")
		case client.SendEventDataStatusUnknown:
			d.Error = client.Ptr("the worker's lease expired while the provider call was in flight")
		case client.SendEventDataStatusSuppressed:
			d.SendId, d.SubscriberId, d.Email, d.Attempts = 902, client.Ptr(int64(56)), "bob@example.com", nil
		}
		return d
	}
	engagement := func(click bool) client.SendEngagementEventData {
		d := client.SendEngagementEventData{CampaignId: client.Ptr(int64(7)), SendId: client.Ptr(int64(901)), SubscriberId: client.Ptr(int64(55)),
			Email: "ada@example.com", Human: true, BotReasons: []string{}}
		if click {
			d.LinkIndex, d.Url, d.Honeypot = client.Ptr(1), client.Ptr("https://shop.example/sale"), client.Ptr(false)
		}
		return d
	}
	lists := func(source string) client.SubscriberListsEventData {
		return client.SubscriberListsEventData{Email: "ada@example.com", SubscriberId: client.Ptr(int64(55)), ListIds: []int64{7}, Source: source}
	}
	feedback := func(kind string) client.ProviderFeedbackEventData {
		return client.ProviderFeedbackEventData{Email: "bob@example.com", Kind: kind, Source: "webhook:standard:3",
			ProviderEventId: "p-1", JobId: "campaign:7:56", ProviderMessageId: "0100018f-3c1e-7a2b-9d4e-5f6a7b8c9d0f"}
	}
	suppression := client.SuppressionEventData{Email: "bob@example.com", Reason: client.SuppressionEventDataReasonManual, Source: "api"}

	switch typ {
	case client.EventTypeCampaignApproved:
		return typed(client.CampaignApprovedEvent{Id: id, Timestamp: now, Type: "campaign.approved", Data: campaign("approved", nil)})
	case client.EventTypeCampaignStarted:
		return typed(client.CampaignStartedEvent{Id: id, Timestamp: now, Type: "campaign.started", Data: campaign("sending", nil)})
	case client.EventTypeCampaignPaused:
		return typed(client.CampaignPausedEvent{Id: id, Timestamp: now, Type: "campaign.paused", Data: campaign("paused", nil)})
	case client.EventTypeCampaignResumed:
		return typed(client.CampaignResumedEvent{Id: id, Timestamp: now, Type: "campaign.resumed", Data: campaign("sending", nil)})
	case client.EventTypeCampaignCancelled:
		return typed(client.CampaignCancelledEvent{Id: id, Timestamp: now, Type: "campaign.cancelled", Data: campaign("cancelled", nil)})
	case client.EventTypeCampaignFailed:
		return typed(client.CampaignFailedEvent{Id: id, Timestamp: now, Type: "campaign.failed",
			Data: campaign("failed", client.Ptr("the segment cannot be evaluated - jsonpath: division by zero"))})
	case client.EventTypeCampaignWinnerChosen:
		return typed(client.CampaignWinnerChosenEvent{Id: id, Timestamp: now, Type: "campaign.winner_chosen",
			Data: client.CampaignWinnerEventData{CampaignId: 7, Name: "March news", Variant: "B",
				ChosenBy: client.CampaignWinnerEventDataChosenByAutomatic, Metric: client.CampaignWinnerEventDataMetricClicks}})
	case client.EventTypeCampaignSent:
		return typed(client.CampaignSentEvent{Id: id, Timestamp: now, Type: "campaign.sent", Data: campaign("sent", nil)})
	case client.EventTypeSendSent:
		return typed(client.SendSentEvent{Id: id, Timestamp: now, Type: "send.sent", Data: send(client.SendEventDataStatusSent)})
	case client.EventTypeSendFailed:
		return typed(client.SendFailedEvent{Id: id, Timestamp: now, Type: "send.failed", Data: send(client.SendEventDataStatusFailed)})
	case client.EventTypeSendUnknown:
		return typed(client.SendUnknownEvent{Id: id, Timestamp: now, Type: "send.unknown", Data: send(client.SendEventDataStatusUnknown)})
	case client.EventTypeSendSuppressed:
		return typed(client.SendSuppressedEvent{Id: id, Timestamp: now, Type: "send.suppressed", Data: send(client.SendEventDataStatusSuppressed)})
	case client.EventTypeSendClicked:
		return typed(client.SendClickedEvent{Id: id, Timestamp: now, Type: "send.clicked", Data: engagement(true)})
	case client.EventTypeSendOpened:
		return typed(client.SendOpenedEvent{Id: id, Timestamp: now, Type: "send.opened", Data: engagement(false)})
	case client.EventTypeSubscriberUnsubscribed:
		return typed(client.SubscriberUnsubscribedEvent{Id: id, Timestamp: now, Type: "subscriber.unsubscribed",
			Data: client.SubscriberUnsubscribedEventData{Email: "ada@example.com", SubscriberId: client.Ptr(int64(55)),
				CampaignId: client.Ptr(int64(7)), Source: "one-click:campaign:7"}})
	case client.EventTypeSubscriberSubscribed:
		return typed(client.SubscriberSubscribedEvent{Id: id, Timestamp: now, Type: "subscriber.subscribed", Data: lists("signup:form")})
	case client.EventTypeSubscriberConfirmed:
		return typed(client.SubscriberConfirmedEvent{Id: id, Timestamp: now, Type: "subscriber.confirmed", Data: lists("optin:confirm")})
	case client.EventTypeSubscriberCreated:
		return typed(client.SubscriberCreatedEvent{Id: id, Timestamp: now, Type: "subscriber.created",
			Data: client.SubscriberCreatedEventData{Email: "ada@example.com", SubscriberId: 55, Status: "pending", Source: "signup:form"}})
	case client.EventTypeSubscriberErased:
		return typed(client.SubscriberErasedEvent{Id: id, Timestamp: now, Type: "subscriber.erased",
			Data: client.SubscriberErasedEventData{ErasureId: 12, SubscriberId: client.Ptr(int64(55)), RequestedBy: "api_key:3"}})
	case client.EventTypeSubscriberBounced:
		return typed(client.SubscriberBouncedEvent{Id: id, Timestamp: now, Type: "subscriber.bounced", Data: feedback("hard_bounce")})
	case client.EventTypeSubscriberComplained:
		return typed(client.SubscriberComplainedEvent{Id: id, Timestamp: now, Type: "subscriber.complained", Data: feedback("complaint")})
	case client.EventTypeSuppressionCreated:
		return typed(client.SuppressionCreatedEvent{Id: id, Timestamp: now, Type: "suppression.created", Data: suppression})
	case client.EventTypeSuppressionDeleted:
		return typed(client.SuppressionDeletedEvent{Id: id, Timestamp: now, Type: "suppression.deleted", Data: suppression})
	case client.EventTypeEndpointDisabled:
		return typed(client.EndpointDisabledEvent{Id: id, Timestamp: now, Type: "endpoint.disabled",
			Data: client.EndpointDisabledEventData{EndpointId: 3, Url: "https://crm.example.com/sendonce", Reason: "the endpoint answered 410 Gone"}})
	case client.EventTypeEndpointPing:
		return typed(client.EndpointPingEvent{Id: id, Timestamp: now, Type: "endpoint.ping", Data: client.EndpointPingEventData{EndpointId: 3}})
	case client.EventTypeSenderComplaintRateExceeded:
		return typed(client.SenderComplaintRateExceededEvent{Id: id, Timestamp: now, Type: "sender.complaint_rate_exceeded",
			Data: client.SenderComplaintRateEventData{SenderId: client.Ptr(int64(3)), Rate: 0.004, Complaints: 4, Delivered: 1000,
				WindowSeconds: 604800, Threshold: 0.003, Reason: "complaint rate 0.40 % over 7 days is above 0.30 %"}})
	case client.EventTypeSequenceStepSent:
		return typed(client.SequenceStepSentEvent{Id: id, Timestamp: now, Type: "sequence.step_sent",
			Data: client.SequenceStepSentEventData{SequenceId: 4, EnrollmentId: 31, SubscriberId: 55, Email: "ada@example.com",
				Step: 1, CampaignId: 12, JobId: "sequence:4:1:55", Run: 0}})
	case client.EventTypeSequenceExited:
		return typed(client.SequenceExitedEvent{Id: id, Timestamp: now, Type: "sequence.exited",
			Data: client.SequenceExitedEventData{SequenceId: 4, EnrollmentId: 31, SubscriberId: 55, Email: "ada@example.com",
				Step: 3, Reason: "completed"}})
	}
	return client.Event{}, fmt.Errorf("%q is not an event type; one of: %v", typ, eventTypes())
}

// typed turns a typed event into the SDK's Event union, as a receiver decodes it.
func typed[T any](v T) (client.Event, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return client.Event{}, err
	}
	var ev client.Event
	err = json.Unmarshal(b, &ev)
	return ev, err
}

// eventTypes lists the catalogue: every type sampleEvent makes, sorted.
func eventTypes() []string {
	var out []string
	for _, t := range allEventTypes {
		out = append(out, string(t))
	}
	slices.Sort(out)
	return out
}

// allEventTypes is the EventType enum (a test holds it to openapi.yaml's).
var allEventTypes = []client.EventType{
	client.EventTypeCampaignApproved, client.EventTypeCampaignCancelled, client.EventTypeCampaignFailed, client.EventTypeCampaignWinnerChosen,
	client.EventTypeCampaignPaused, client.EventTypeCampaignResumed, client.EventTypeCampaignSent,
	client.EventTypeCampaignStarted, client.EventTypeEndpointDisabled, client.EventTypeEndpointPing,
	client.EventTypeSendClicked, client.EventTypeSendFailed, client.EventTypeSendOpened, client.EventTypeSendSent,
	client.EventTypeSendSuppressed, client.EventTypeSendUnknown, client.EventTypeSenderComplaintRateExceeded,
	client.EventTypeSequenceExited, client.EventTypeSequenceStepSent, client.EventTypeSubscriberBounced,
	client.EventTypeSubscriberComplained, client.EventTypeSubscriberConfirmed, client.EventTypeSubscriberCreated,
	client.EventTypeSubscriberErased, client.EventTypeSubscriberSubscribed, client.EventTypeSubscriberUnsubscribed,
	client.EventTypeSuppressionCreated, client.EventTypeSuppressionDeleted,
}
