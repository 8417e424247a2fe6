package webhook

import (
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Header is the read side of an HTTP header (http.Header satisfies it); this
// package does not import net/http for its handling of requests.
type Header interface {
	Get(key string) string
}

// errSignature is every verification failure; the handler answers 401 and the
// reason goes to the log only.
var errSignature = errors.New("webhook: signature does not verify")

func sigErr(reason string) error { return errors.Join(errSignature, errors.New(reason)) }

// verifyStandard checks a Standard Webhooks signature (spec at
// github.com/standard-webhooks/standard-webhooks, spec/standard-webhooks.md): HMAC-SHA256
// with the base64-decoded whsec_ secret over "id.timestamp.body", any of several
// space-separated "v1,<base64>" signatures, timestamp within Tolerance. prefix is
// "webhook" or, for Resend (Svix), "svix". It returns the message id.
func verifyStandard(h Header, prefix string, body []byte, secrets []string, now time.Time) (string, error) {
	id, ts, sigs := h.Get(prefix+"-id"), h.Get(prefix+"-timestamp"), h.Get(prefix+"-signature")
	if id == "" || ts == "" || sigs == "" {
		return "", sigErr("missing " + prefix + "-id, -timestamp or -signature")
	}
	if strings.Contains(id, ".") || len(id) > 256 {
		return "", sigErr("malformed id")
	}
	if err := checkTimestamp(ts, now); err != nil {
		return "", err
	}
	for _, secret := range secrets {
		key, err := decodeWhsec(secret)
		if err != nil || len(key) == 0 {
			continue
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		want := m.Sum(nil)
		for _, sig := range strings.Fields(sigs) {
			version, b64, ok := strings.Cut(sig, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(b64)
			if err == nil && hmac.Equal(got, want) {
				return id, nil
			}
		}
	}
	return "", sigErr("no matching v1 signature")
}

// checkTimestamp accepts Unix seconds within Tolerance of now.
func checkTimestamp(ts string, now time.Time) error {
	sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil {
		return sigErr("malformed timestamp")
	}
	d := now.Sub(time.Unix(sec, 0))
	if d > Tolerance || d < -Tolerance {
		return sigErr("timestamp outside the 5-minute tolerance")
	}
	return nil
}

// mailgunSignature is the signature object inside a Mailgun webhook body.
type mailgunSignature struct {
	Timestamp string `json:"timestamp"`
	Token     string `json:"token"`
	Signature string `json:"signature"`
}

// verifyMailgun checks hex(HMAC-SHA256(signing key, timestamp+token)). The signature
// travels inside the JSON, so only the signature object is decoded before checking;
// the event itself is parsed after. It returns the token, Mailgun's unique event id.
func verifyMailgun(body []byte, secrets []string, now time.Time) (string, error) {
	var env struct {
		Signature mailgunSignature `json:"signature"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return "", sigErr("body is not a Mailgun JSON webhook")
	}
	s := env.Signature
	if s.Token == "" || s.Timestamp == "" || s.Signature == "" {
		return "", sigErr("missing signature object")
	}
	if err := checkTimestamp(s.Timestamp, now); err != nil {
		return "", err
	}
	got, err := hex.DecodeString(s.Signature)
	if err != nil {
		return "", sigErr("signature is not hex")
	}
	for _, secret := range secrets {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(s.Timestamp + s.Token))
		if hmac.Equal(got, m.Sum(nil)) {
			return s.Token, nil
		}
	}
	return "", sigErr("mailgun signature does not match")
}

// parseECDSAKey decodes SendGrid's verification key: base64 DER SubjectPublicKeyInfo.
func parseECDSAKey(s string) (*ecdsa.PublicKey, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	k, err := parseECDSAKeyDER(der)
	if err != nil {
		return nil, err
	}
	pub, ok := k.(*ecdsa.PublicKey)
	if !ok {
		return nil, errors.New("not an ECDSA public key")
	}
	return pub, nil
}

// verifySendGrid checks the ECDSA signature over sha256(timestamp || body).
func verifySendGrid(h Header, body []byte, keys []string, now time.Time) error {
	sigB64 := h.Get("X-Twilio-Email-Event-Webhook-Signature")
	ts := h.Get("X-Twilio-Email-Event-Webhook-Timestamp")
	if sigB64 == "" || ts == "" {
		return sigErr("missing X-Twilio-Email-Event-Webhook-Signature or -Timestamp")
	}
	if err := checkTimestamp(ts, now); err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(sigB64)
	if err != nil {
		return sigErr("signature is not base64")
	}
	digest := sha256.New()
	digest.Write([]byte(ts))
	digest.Write(body)
	sum := digest.Sum(nil)
	for _, k := range keys {
		pub, err := parseECDSAKey(k)
		if err == nil && ecdsa.VerifyASN1(pub, sum, sig) {
			return nil
		}
	}
	return sigErr("sendgrid signature does not verify")
}

// verifyPostmark checks HTTP basic auth against the generated "user:password", in
// constant time (Postmark signs nothing; the credentials live in the webhook URL).
func verifyPostmark(h Header, secrets []string) error {
	scheme, b64, _ := strings.Cut(h.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Basic") {
		return sigErr("missing basic auth")
	}
	got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return sigErr("malformed basic auth")
	}
	ok := 0
	for _, secret := range secrets {
		ok |= subtle.ConstantTimeCompare(got, []byte(secret))
	}
	if ok != 1 {
		return sigErr("wrong credentials")
	}
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
