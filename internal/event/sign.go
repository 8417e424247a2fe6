package event

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// newSecret makes a Standard Webhooks secret: whsec_ and base64 of 32 random bytes.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// sign returns the webhook-signature value for one attempt: a v1 entry per secret,
// space separated, so a receiver holding either secret during a rotation verifies
// (the Standard Webhooks spec, github.com/standard-webhooks/standard-webhooks). The signed content is id.timestamp.body, the raw bytes sent.
func sign(id string, ts time.Time, body []byte, secrets []string) string {
	content := id + "." + strconv.FormatInt(ts.Unix(), 10) + "." + string(body)
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil || len(key) == 0 {
			continue // never stored: secrets are made by newSecret
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(content))
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}

// setHeaders puts the three Standard Webhooks headers on req.
func setHeaders(req *http.Request, id string, ts time.Time, body []byte, secrets []string) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sendonce-webhooks/1")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", sign(id, ts, body, secrets))
}
