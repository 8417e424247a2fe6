package webhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
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

// FuzzVerify feeds arbitrary and mutated bodies and headers to the verifiers. The
// corpus starts from genuinely signed deliveries (Standard Webhooks HMAC, SendGrid
// ECDSA); whatever the fuzzer changes, a delivery verifies only if the bytes the
// signature covers are exactly the signed ones.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1700000000, 0)
	const ts = "1700000000"
	signedBody := []byte(`{"type":"subscriber.unsubscribed","data":{"email":"a@example.com"}}`)
	hmacKey := []byte("secret-secret-secret-secret")
	secret := []string{"whsec_" + base64.StdEncoding.EncodeToString(hmacKey)}
	m := hmac.New(sha256.New, hmacKey)
	m.Write([]byte("msg_1." + ts + "."))
	m.Write(signedBody)
	standardSig := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))

	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		f.Fatal(err)
	}
	sgKey := []string{base64.StdEncoding.EncodeToString(der)}
	digest := sha256.Sum256(append([]byte(ts), signedBody...))
	sgRaw, err := ecdsa.SignASN1(rand.Reader, priv, digest[:])
	if err != nil {
		f.Fatal(err)
	}
	sgSig := base64.StdEncoding.EncodeToString(sgRaw)

	// The genuine deliveries verify, so the assertions below are not vacuous.
	genuine := http.Header{}
	genuine.Set("webhook-id", "msg_1")
	genuine.Set("webhook-timestamp", ts)
	genuine.Set("webhook-signature", standardSig)
	genuine.Set("X-Twilio-Email-Event-Webhook-Signature", sgSig)
	genuine.Set("X-Twilio-Email-Event-Webhook-Timestamp", ts)
	if _, err := verifyStandard(genuine, "webhook", signedBody, secret, now); err != nil {
		f.Fatal(err)
	}
	if err := verifySendGrid(genuine, signedBody, sgKey, now); err != nil {
		f.Fatal(err)
	}
	f.Add(signedBody, "msg_1", ts, standardSig, sgSig)
	f.Add(signedBody, "msg_1", ts, standardSig+" v1,AAAA", sgSig)
	f.Add([]byte(`{"signature":{"timestamp":"1","token":"t","signature":"00"}}`), "msg", ts, "v1,AAAA", "AAAA")
	f.Fuzz(func(t *testing.T, body []byte, id, ts, sig, sgSig string) {
		h := http.Header{}
		for _, p := range []string{"webhook", "svix"} {
			h.Set(p+"-id", id)
			h.Set(p+"-timestamp", ts)
			h.Set(p+"-signature", sig)
		}
		h.Set("X-Twilio-Email-Event-Webhook-Signature", sgSig)
		h.Set("X-Twilio-Email-Event-Webhook-Timestamp", ts)
		h.Set("Authorization", sig)
		if _, err := verifyStandard(h, "webhook", body, secret, now); err == nil {
			if got := h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "." + string(body); got != "msg_1."+"1700000000."+string(signedBody) {
				t.Fatalf("forged standard delivery accepted: %q", got)
			}
		}
		if _, err := verifyMailgun(body, secret, now); err == nil {
			t.Fatal("forged mailgun signature accepted")
		}
		if err := verifySendGrid(h, body, sgKey, now); err == nil {
			if got := h.Get("X-Twilio-Email-Event-Webhook-Timestamp") + string(body); got != "1700000000"+string(signedBody) {
				t.Fatalf("forged sendgrid delivery accepted: %q", got)
			}
		}
		if verifyPostmark(h, []string{"user:pass-pass-pass"}) == nil {
			t.Fatal("wrong basic auth accepted")
		}
	})
}
