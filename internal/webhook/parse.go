package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// The parsers below run only on verified bodies. Each maps its provider's events to
// our four kinds the way django-anymail's normalisers (anymail/webhooks/*.py) and
// listmonk's bounce webhooks do: unsubscribes, complaints, permanent bounces, and
// temporary bounces or delays as soft bounces; anything unlisted is KindOther and ignored.

// parseStandard reads our generic opt-out post: {"type", "data": {"email", "job_id",
// "provider_message_id", "bounce_type"}}. The event id is the webhook-id header.
func parseStandard(id string, body []byte) ([]Event, error) {
	var p struct {
		Type string `json:"type"`
		Data struct {
			Email             string `json:"email"`
			JobID             string `json:"job_id"`
			ProviderMessageID string `json:"provider_message_id"`
			BounceType        string `json:"bounce_type"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("standard payload: %w", err)
	}
	kind := KindOther
	switch p.Type {
	case "subscriber.unsubscribed":
		kind = KindUnsubscribe
	case "subscriber.complained":
		kind = KindComplaint
	case "subscriber.bounced":
		kind = KindHardBounce
		if strings.EqualFold(p.Data.BounceType, "soft") {
			kind = KindSoftBounce
		}
	}
	return []Event{{ID: id, Type: p.Type, Kind: kind, Email: p.Data.Email,
		JobID: p.Data.JobID, ProviderMessageID: p.Data.ProviderMessageID}}, nil
}

// parseResend reads a Resend (Svix) payload; data.to may name several recipients.
func parseResend(id string, body []byte) ([]Event, error) {
	var p struct {
		Type string `json:"type"`
		Data struct {
			EmailID string          `json:"email_id"`
			To      json.RawMessage `json:"to"`
			Email   string          `json:"email"`
			Tags    json.RawMessage `json:"tags"`
			Bounce  struct {
				Type string `json:"type"`
			} `json:"bounce"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("resend payload: %w", err)
	}
	kind := map[string]Kind{
		"email.bounced": KindHardBounce, "email.complained": KindComplaint,
		"email.delivery_delayed": KindSoftBounce,
	}[p.Type]
	if kind == "" {
		kind = KindOther
	}
	// Resend passes on SES's bounce types: Permanent, Transient and Undetermined. Only
	// a permanent one (or one without a type, which email.bounced documents as a
	// permanent rejection) proves the address bad; the others may deliver later.
	if kind == KindHardBounce && p.Data.Bounce.Type != "" && !strings.EqualFold(p.Data.Bounce.Type, "Permanent") {
		kind = KindSoftBounce
	}
	var to []string
	if err := json.Unmarshal(p.Data.To, &to); err != nil {
		var one string
		if json.Unmarshal(p.Data.To, &one) == nil && one != "" {
			to = []string{one}
		}
	}
	if len(to) == 0 && p.Data.Email != "" {
		to = []string{p.Data.Email}
	}
	jobID := tagValue(p.Data.Tags, "job_id")
	return perRecipient(id, p.Type, kind, to, jobID, p.Data.EmailID), nil
}

// tagValue finds a tag either as an object {"job_id": "…"} or a list [{"name","value"}].
func tagValue(raw json.RawMessage, name string) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) == nil {
		s, _ := m[name].(string)
		return s
	}
	var list []struct{ Name, Value string }
	if json.Unmarshal(raw, &list) == nil {
		for _, t := range list {
			if t.Name == name {
				return t.Value
			}
		}
	}
	return ""
}

// perRecipient fans one provider event out to one Event per address; the id gets a
// suffix when there are several, so each is its own replay key.
func perRecipient(id, typ string, kind Kind, to []string, jobID, msgID string) []Event {
	if len(to) == 0 {
		return []Event{{ID: id, Type: typ, Kind: kind, JobID: jobID, ProviderMessageID: msgID}}
	}
	out := make([]Event, 0, len(to))
	for i, addr := range to {
		eid := id
		if len(to) > 1 {
			eid = fmt.Sprintf("%s#%d", id, i)
		}
		out = append(out, Event{ID: eid, Type: typ, Kind: kind, Email: addr, JobID: jobID, ProviderMessageID: msgID})
	}
	return out
}

// parseMailgun reads {"signature", "event-data"}; the id is the signature token
// (event-data.id is unique only within a day).
func parseMailgun(token string, body []byte) ([]Event, error) {
	var p struct {
		EventData struct {
			Event         string                           `json:"event"`
			Severity      string                           `json:"severity"`
			Recipient     string                           `json:"recipient"`
			UserVariables map[string]any                   `json:"user-variables"`
			Message       struct{ Headers map[string]any } `json:"message"`
		} `json:"event-data"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("mailgun payload: %w", err)
	}
	e := p.EventData
	kind := KindOther
	switch e.Event {
	case "unsubscribed":
		kind = KindUnsubscribe
	case "complained":
		kind = KindComplaint
	case "failed":
		kind = KindSoftBounce
		if e.Severity == "permanent" {
			kind = KindHardBounce
		}
	}
	jobID, _ := e.UserVariables["job_id"].(string)
	msgID, _ := e.Message.Headers["message-id"].(string)
	return []Event{{ID: token, Type: e.Event, Kind: kind, Email: e.Recipient, JobID: jobID, ProviderMessageID: msgID}}, nil
}

// parseSendGrid reads a JSON array of events, each with its own sg_event_id.
func parseSendGrid(body []byte) ([]Event, error) {
	var p []struct {
		Email     string `json:"email"`
		Event     string `json:"event"`
		Type      string `json:"type"`
		EventID   string `json:"sg_event_id"`
		MessageID string `json:"sg_message_id"`
		JobID     string `json:"job_id"`
		Reason    string `json:"reason"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("sendgrid payload: %w", err)
	}
	out := make([]Event, 0, len(p))
	for _, e := range p {
		kind := KindOther
		switch e.Event {
		case "unsubscribe", "group_unsubscribe":
			kind = KindUnsubscribe
		case "spamreport":
			kind = KindComplaint
		case "deferred":
			kind = KindSoftBounce
		case "dropped":
			// SendGrid already suppresses these at its end (its "dropped" reasons,
			// documented with the Event Webhook); mirror the reason so other providers
			// and our own claims honour it too.
			kind = map[string]Kind{"Bounced Address": KindHardBounce, "Invalid": KindHardBounce,
				"Unsubscribed Address": KindUnsubscribe, "Spam Reporting Address": KindComplaint}[e.Reason]
			if kind == "" {
				kind = KindOther
			}
		case "bounce":
			// A block is the receiving server refusing this message, not a bad address.
			kind = KindHardBounce
			if strings.EqualFold(e.Type, "blocked") {
				kind = KindSoftBounce
			}
		}
		if e.EventID == "" {
			return nil, fmt.Errorf("sendgrid event without sg_event_id")
		}
		// sg_message_id is the X-Message-Id SendGrid returned, plus a ".filter…" suffix.
		msgID, _, _ := strings.Cut(e.MessageID, ".")
		out = append(out, Event{ID: e.EventID, Type: e.Event, Kind: kind, Email: e.Email, JobID: e.JobID, ProviderMessageID: msgID})
	}
	return out, nil
}

// parsePostmark reads one Bounce, SpamComplaint or SubscriptionChange record.
func parsePostmark(body []byte) ([]Event, error) {
	var p struct {
		RecordType        string          `json:"RecordType"`
		ID                json.RawMessage `json:"ID"`
		Type              string          `json:"Type"`
		Email             string          `json:"Email"`
		Recipient         string          `json:"Recipient"`
		MessageID         string          `json:"MessageID"`
		ChangedAt         string          `json:"ChangedAt"`
		SuppressSending   bool            `json:"SuppressSending"`
		SuppressionReason string          `json:"SuppressionReason"`
		Metadata          map[string]any  `json:"Metadata"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, fmt.Errorf("postmark payload: %w", err)
	}
	kind := KindOther
	email := p.Email
	id := strings.Trim(string(p.ID), `"`)
	switch p.RecordType {
	case "Bounce":
		switch p.Type {
		case "HardBounce", "BadEmailAddress":
			kind = KindHardBounce
		case "SoftBounce", "Transient", "DnsError":
			kind = KindSoftBounce
		case "SpamComplaint":
			kind = KindComplaint
		}
	case "SpamComplaint":
		kind = KindComplaint
	case "SubscriptionChange":
		email = p.Recipient
		if p.SuppressSending {
			kind = map[string]Kind{"HardBounce": KindHardBounce, "SpamComplaint": KindComplaint,
				"ManualSuppression": KindUnsubscribe}[p.SuppressionReason]
			if kind == "" {
				kind = KindUnsubscribe
			}
		}
		// A subscription change has no id: the hash of what identifies it stands in.
		sum := sha256.Sum256([]byte(strings.Join([]string{p.MessageID, p.Recipient, p.ChangedAt,
			fmt.Sprint(p.SuppressSending)}, "\x00")))
		id = "sc-" + hex.EncodeToString(sum[:16])
	}
	if id == "" || id == "null" {
		return nil, fmt.Errorf("postmark record without ID")
	}
	jobID, _ := p.Metadata["job_id"].(string)
	return []Event{{ID: id, Type: p.RecordType + ":" + p.Type, Kind: kind, Email: email, JobID: jobID, ProviderMessageID: p.MessageID}}, nil
}

// parseSES reads the SES event inside a verified SNS Notification's Message string.
func parseSES(messageID, message string) ([]Event, error) {
	var p struct {
		EventType        string `json:"eventType"`
		NotificationType string `json:"notificationType"`
		Mail             struct {
			MessageID string              `json:"messageId"`
			Tags      map[string][]string `json:"tags"`
		} `json:"mail"`
		Bounce struct {
			BounceType        string                          `json:"bounceType"`
			BouncedRecipients []struct{ EmailAddress string } `json:"bouncedRecipients"`
		} `json:"bounce"`
		Complaint struct {
			ComplainedRecipients []struct{ EmailAddress string } `json:"complainedRecipients"`
		} `json:"complaint"`
		DeliveryDelay struct {
			DelayedRecipients []struct{ EmailAddress string } `json:"delayedRecipients"`
		} `json:"deliveryDelay"`
	}
	if err := json.Unmarshal([]byte(message), &p); err != nil {
		return nil, fmt.Errorf("ses message: %w", err)
	}
	typ := p.EventType
	if typ == "" {
		typ = p.NotificationType
	}
	var jobID string
	if v := p.Mail.Tags["job_id"]; len(v) > 0 {
		jobID = v[0]
	}
	kind, to := KindOther, []string(nil)
	switch typ {
	case "Bounce":
		kind = KindSoftBounce
		if p.Bounce.BounceType == "Permanent" {
			kind = KindHardBounce
		}
		for _, r := range p.Bounce.BouncedRecipients {
			to = append(to, r.EmailAddress)
		}
	case "Complaint":
		kind = KindComplaint
		for _, r := range p.Complaint.ComplainedRecipients {
			to = append(to, r.EmailAddress)
		}
	case "DeliveryDelay":
		kind = KindSoftBounce
		for _, r := range p.DeliveryDelay.DelayedRecipients {
			to = append(to, r.EmailAddress)
		}
	}
	return perRecipient(messageID, typ, kind, to, jobID, p.Mail.MessageID), nil
}
