package httpapi_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func (e *optoutEnv) api(t *testing.T, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.url+path, r)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// deliverSigned POSTs body to a webhook path with Standard Webhooks headers signed by secret.
func deliverSigned(t *testing.T, url, secret, id string, ts time.Time, body []byte) (int, map[string]any) {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	require.NoError(t, err)
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%d.%s", id, ts.Unix(), body)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// sameProblem drops what differs per request (its path and id) from a problem body.
func sameProblem(p map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range p {
		if k != "instance" && k != "request_id" {
			out[k] = v
		}
	}
	return out
}

func TestWebhookEndpointsAPIAndDelivery(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	status, created := e.api(t, http.MethodPost, "/v1/webhook-endpoints", map[string]any{"source": "standard", "name": "crm"})
	require.Equal(t, http.StatusCreated, status, created)
	creds := created["credentials"].(map[string]any)
	secret := creds["secret"].(string)
	path := created["path"].(string)
	id := int64(created["id"].(float64))
	require.Equal(t, fmt.Sprintf("/v1/webhooks/standard/%d", id), path)

	status, list := e.api(t, http.MethodGet, "/v1/webhook-endpoints", nil)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, list["data"], 1)
	require.NotContains(t, fmt.Sprint(list), secret, "list never shows secrets")

	status, bad := e.api(t, http.MethodPost, "/v1/webhook-endpoints", map[string]any{"source": "pigeon"})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Equal(t, "/source", bad["errors"].([]any)[0].(map[string]any)["pointer"])

	// A signed opt-out from the tenant's own system, correlated to the send by job id.
	body := []byte(`{"type":"subscriber.complained","data":{"email":"ada@example.com","job_id":"job-ada"}}`)
	status, res := deliverSigned(t, e.url+path, secret, "evt-1", time.Now(), body)
	require.Equal(t, http.StatusOK, status, res)
	require.Equal(t, float64(1), res["suppressed"])
	reason, source := e.suppressed(t)
	require.Equal(t, "complaint", reason)
	require.Equal(t, fmt.Sprintf("webhook:standard:%d", id), source)
	var feedback string
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT feedback FROM sends WHERE job_id = 'job-ada'`).Scan(&feedback))
	require.Equal(t, "complaint", feedback)

	// Bad signature, unknown endpoint, malformed id → the same 401 problem, so endpoint
	// ids cannot be probed; no API key needed either way.
	status, prob := deliverSigned(t, e.url+path, "whsec_"+base64.StdEncoding.EncodeToString([]byte("wrong-secret-wrong-secret-wrong!")), "evt-2", time.Now(), body)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "https://sendonce.dev/problems/unauthorized", prob["type"])
	status, unknown := deliverSigned(t, e.url+"/v1/webhooks/standard/999999", secret, "evt-3", time.Now(), body)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, sameProblem(prob), sameProblem(unknown), "an unknown endpoint looks like a bad signature")
	status, malformed := deliverSigned(t, e.url+"/v1/webhooks/standard/abc", secret, "evt-3", time.Now(), body)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, sameProblem(prob), sameProblem(malformed))
	status, wrongSource := deliverSigned(t, fmt.Sprintf("%s/v1/webhooks/resend/%d", e.url, id), secret, "evt-3", time.Now(), body)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, sameProblem(prob), sameProblem(wrongSource), "an endpoint under another source looks like a bad signature")

	// Rotate with no grace: the old secret stops at once, the new one works.
	status, rotated := e.api(t, http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/rotate", id), map[string]any{"grace_seconds": 0})
	require.Equal(t, http.StatusOK, status, rotated)
	fresh := rotated["credentials"].(map[string]any)["secret"].(string)
	status, _ = deliverSigned(t, e.url+path, secret, "evt-4", time.Now(), body)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _ = deliverSigned(t, e.url+path, fresh, "evt-4", time.Now(), body)
	require.Equal(t, http.StatusOK, status)
	status, again := e.api(t, http.MethodPost, fmt.Sprintf("/v1/webhook-endpoints/%d/rotate", id), nil)
	require.Equal(t, http.StatusOK, status, "a rotate without a body takes the defaults: %v", again)
	require.NotNil(t, again["previous_secret_expires_at"])

	status, _ = e.api(t, http.MethodDelete, fmt.Sprintf("/v1/webhook-endpoints/%d", id), nil)
	require.Equal(t, http.StatusNoContent, status)
	status, _ = e.api(t, http.MethodGet, fmt.Sprintf("/v1/webhook-endpoints/%d", id), nil)
	require.Equal(t, http.StatusNotFound, status)
	status, _ = deliverSigned(t, e.url+path, fresh, "evt-5", time.Now(), body)
	require.Equal(t, http.StatusUnauthorized, status, "a deleted endpoint looks like a bad signature")

	// The management API needs a key.
	resp, err := http.Get(e.url + "/v1/webhook-endpoints")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestWebhookSuppressionStopsUnclaimedSends checks, at the SQL level, the property
// the executor relies on: once a signed webhook has committed, the suppression row
// exists, so every send to that address not yet claimed is excluded when claimed.
// TestSignedWebhookStopsMidSendCampaign checks the same with the real executor.
func TestWebhookSuppressionStopsUnclaimedSends(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	_, err := e.pool.Exec(e.ctx, `INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id)
		SELECT $1, $2, 100000 + g, 'r' || g || '@example.com', 'r' || g || '@example.com', 'job-r' || g
		FROM generate_series(1, 20000) g`, e.campaignID, e.accountID)
	require.NoError(t, err)
	status, created := e.api(t, http.MethodPost, "/v1/webhook-endpoints", map[string]any{"source": "standard"})
	require.Equal(t, http.StatusCreated, status)
	secret := created["credentials"].(map[string]any)["secret"].(string)
	body := []byte(`{"type":"subscriber.unsubscribed","data":{"email":"R777@example.com"}}`)
	status, _ = deliverSigned(t, e.url+created["path"].(string), secret, "evt-1", time.Now(), body)
	require.Equal(t, http.StatusOK, status)

	var unsuppressedQueued int
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM sends d
		WHERE d.campaign_id = $1 AND d.status = 'queued'
		  AND NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = d.account_id AND s.email_lower = d.email_lower)`,
		e.campaignID).Scan(&unsuppressedQueued))
	require.Equal(t, 19999, unsuppressedQueued)
}

func TestWebhookDeliveryLimitsAndUnknownSource(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	status, created := e.api(t, http.MethodPost, "/v1/webhook-endpoints", map[string]any{"source": "standard"})
	require.Equal(t, http.StatusCreated, status)
	secret := created["credentials"].(map[string]any)["secret"].(string)
	id := int64(created["id"].(float64))

	huge := append([]byte(`{"type":"subscriber.unsubscribed","data":{"email":"ada@example.com"},"pad":"`), bytes.Repeat([]byte("x"), 6<<20)...)
	huge = append(huge, `"}`...)
	status, _ = deliverSigned(t, e.url+created["path"].(string), secret, "big", time.Now(), huge)
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	status, _ = deliverSigned(t, fmt.Sprintf("%s/v1/webhooks/carrier-pigeon/%d", e.url, id), secret, "x", time.Now(), []byte(`{}`))
	require.Equal(t, http.StatusUnauthorized, status)
	reason, _ := e.suppressed(t)
	require.Empty(t, reason)
}
