package webhook

import (
	"net/http"
	"testing"
	"time"
)

// The parsers read provider bytes after verification, but a provider bug or a
// leaked secret can still put anything there: they must never panic.

func FuzzParsers(f *testing.F) {
	for _, s := range []string{
		`{"type":"subscriber.unsubscribed","data":{"email":"a@example.com"}}`,
		`{"type":"email.bounced","data":{"email_id":"x","to":["a@example.com","b@example.com"],"tags":[{"name":"job_id","value":"j"}]}}`,
		`{"type":"email.complained","data":{"to":"a@example.com","tags":{"job_id":"j"}}}`,
		`{"signature":{"token":"t"},"event-data":{"event":"failed","severity":"temporary","recipient":"a@example.com","message":{"headers":{"message-id":"m"}}}}`,
		`[{"email":"a@example.com","event":"bounce","type":"blocked","sg_event_id":"e","sg_message_id":"m.f"}]`,
		`{"RecordType":"SubscriptionChange","Recipient":"a@example.com","SuppressSending":true,"SuppressionReason":"HardBounce"}`,
		`{"RecordType":"Bounce","ID":1,"Type":"SoftBounce","Email":"a@example.com","Metadata":{"job_id":"j"}}`,
		`{"eventType":"Bounce","mail":{"messageId":"m","tags":{"job_id":["j"]}},"bounce":{"bounceType":"Transient","bouncedRecipients":[{"emailAddress":"a@example.com"}]}}`,
		`null`, `[]`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, evs := range [][]Event{
			must(parseStandard("id", body)), must(parseResend("id", body)), must(parseMailgun("tok", body)),
			must(parseSendGrid(body)), must(parsePostmark(body)), must(parseSES("id", string(body))),
		} {
			for _, e := range evs {
				switch e.Kind {
				case KindUnsubscribe, KindHardBounce, KindSoftBounce, KindComplaint, KindOther:
				default:
					t.Fatalf("unknown kind %q from %q", e.Kind, body)
				}
			}
		}
	})
}

func must(evs []Event, _ error) []Event { return evs }

// FuzzVerify feeds arbitrary bodies and headers to the verifiers: they must reject
// (not panic) everything not signed with the secret.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"signature":{"timestamp":"1","token":"t","signature":"00"}}`), "msg", "1700000000", "v1,AAAA")
	f.Fuzz(func(t *testing.T, body []byte, id, ts, sig string) {
		now := time.Unix(1700000000, 0)
		h := http.Header{}
		for _, p := range []string{"webhook", "svix"} {
			h.Set(p+"-id", id)
			h.Set(p+"-timestamp", ts)
			h.Set(p+"-signature", sig)
		}
		h.Set("X-Twilio-Email-Event-Webhook-Signature", sig)
		h.Set("X-Twilio-Email-Event-Webhook-Timestamp", ts)
		h.Set("Authorization", sig)
		secret := []string{"whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"}
		if _, err := verifyStandard(h, "webhook", body, secret, now); err == nil {
			t.Fatal("forged standard signature accepted")
		}
		if _, err := verifyMailgun(body, secret, now); err == nil {
			t.Fatal("forged mailgun signature accepted")
		}
		_ = verifySendGrid(h, body, []string{"bm90IGEga2V5"}, now)
		if verifyPostmark(h, []string{"user:pass-pass-pass"}) == nil {
			t.Fatal("wrong basic auth accepted")
		}
	})
}
