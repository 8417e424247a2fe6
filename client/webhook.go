package client

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrSignature is returned by Verify for a delivery that is not signed by any of the
// secrets, or is too old or too far in the future.
var ErrSignature = errors.New("sendonce: webhook signature does not verify")

// Tolerance is how far a delivery's webhook-timestamp may be from now (Standard
// Webhooks suggests five minutes): an older one is refused as a possible replay.
const Tolerance = 5 * time.Minute

// Verify checks a delivery from one of your event endpoints and returns its events
// (as Stripe's ConstructEvent does): one, or the events of a batch delivery (an
// endpoint whose batch_size is above 1). Switch on each one's Payload for its typed
// data; deduplicate on each event's Id (deliveries are at least once).
//
// The check is Standard Webhooks': headers webhook-id, webhook-timestamp,
// webhook-signature; an HMAC-SHA256 of "id.timestamp.body" under the endpoint's
// whsec_ secret. Pass the raw body as received, before any JSON decoding, and every
// secret you hold during a rotation. now is the time to compare the timestamp with
// (time.Now in a handler). A delivery that does not verify is ErrSignature, and
// nothing of it is decoded.
func Verify(header http.Header, body []byte, now time.Time, secrets ...string) ([]Event, error) {
	id := header.Get("webhook-id")
	ts := header.Get("webhook-timestamp")
	sigs := header.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return nil, ErrSignature
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, ErrSignature
	}
	if d := now.Sub(time.Unix(sec, 0)); d > Tolerance || d < -Tolerance {
		return nil, ErrSignature
	}
	for _, s := range secrets {
		want, ok := mac(s, id, ts, body)
		if !ok {
			continue
		}
		for _, entry := range strings.Fields(sigs) {
			version, sig, ok := strings.Cut(entry, ",")
			if !ok || version != "v1" {
				continue
			}
			got, err := base64.StdEncoding.DecodeString(sig)
			if err == nil && hmac.Equal(got, want) {
				return decodeDelivery(body)
			}
		}
	}
	return nil, ErrSignature
}

// Sign returns the webhook-signature header value of a delivery of body with id at
// ts under secret (a whsec_ secret), as the service signs its deliveries: for
// sending signed test deliveries to your own receiver (sendonce events forward).
// An unusable secret signs nothing ("").
func Sign(secret, id string, ts time.Time, body []byte) string {
	sum, ok := mac(secret, id, strconv.FormatInt(ts.Unix(), 10), body)
	if !ok {
		return ""
	}
	return "v1," + base64.StdEncoding.EncodeToString(sum)
}

// mac is the Standard Webhooks HMAC-SHA256 of "id.timestamp.body" under secret;
// false when secret is not whsec_ base64.
func mac(secret, id, ts string, body []byte) ([]byte, bool) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil || len(key) == 0 {
		return nil, false
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id + "." + ts + "."))
	h.Write(body)
	return h.Sum(nil), true
}
