package webhook_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/webhook"
)

// fakeSNS is Amazon's side: an RSA key, its self-signed certificate served over
// HTTPS by httptest, and a signer for SNS messages.
type fakeSNS struct {
	key     *rsa.PrivateKey
	srv     *httptest.Server
	certURL string
	fetches int
}

func newFakeSNS(t *testing.T) *fakeSNS {
	f := &fakeSNS{}
	var err error
	f.key, err = rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &f.key.PublicKey, f.key)
	require.NoError(t, err)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	f.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.fetches++
		_, _ = w.Write(pemBytes)
	}))
	t.Cleanup(f.srv.Close)
	f.certURL = f.srv.URL + "/SimpleNotificationService-abc123.pem"
	return f
}

func (f *fakeSNS) options() webhook.Options {
	host := strings.TrimPrefix(f.srv.URL, "https://")
	return webhook.Options{
		SNSCertHost: regexp.MustCompile("^" + regexp.QuoteMeta(host) + "$"),
		FetchCert:   webhook.FetchWith(f.srv.Client()),
	}
}

// sign fills Signature over the canonical string of version 1 (SHA1) or 2 (SHA256).
func (f *fakeSNS) sign(t *testing.T, m map[string]string, version string) []byte {
	keys := []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"}
	if m["Type"] != "Notification" {
		keys = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	}
	var b strings.Builder
	for _, k := range keys {
		if v, ok := m[k]; ok {
			b.WriteString(k + "\n" + v + "\n")
		}
	}
	var sig []byte
	var err error
	if version == "1" {
		sum := sha1.Sum([]byte(b.String())) //nolint:gosec // SNS v1
		sig, err = rsa.SignPKCS1v15(rand.Reader, f.key, crypto.SHA1, sum[:])
	} else {
		sum := sha256.Sum256([]byte(b.String()))
		sig, err = rsa.SignPKCS1v15(rand.Reader, f.key, crypto.SHA256, sum[:])
	}
	require.NoError(t, err)
	m["SignatureVersion"] = version
	m["Signature"] = base64.StdEncoding.EncodeToString(sig)
	if m["SigningCertURL"] == "" {
		m["SigningCertURL"] = f.certURL
	}
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

const topic = "arn:aws:sns:eu-west-1:123456789012:ses-events"

func notification(id, sesEvent string) map[string]string {
	return map[string]string{"Type": "Notification", "MessageId": id, "TopicArn": topic,
		"Message": sesEvent, "Timestamp": "2026-01-01T00:00:00.000Z"}
}

func TestSESWebhook(t *testing.T) {
	t.Parallel()
	f := newFakeSNS(t)
	e := setup(t, f.options())
	ep, _ := e.create(webhook.CreateInput{Source: "ses", TopicARNs: []string{topic}})
	bounce := `{"eventType":"Bounce","mail":{"messageId":"ses-1"},"bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"s1@example.com"},{"emailAddress":"s2@example.com"}]}}`
	complaint := `{"notificationType":"Complaint","mail":{"messageId":"ses-2"},"complaint":{"complainedRecipients":[{"emailAddress":"s3@example.com"}]}}`

	// v1 (SHA1) and v2 (SHA256) both verify.
	res, err := e.svc.Deliver(e.ctx, "ses", ep.ID, http.Header{}, f.sign(t, notification("n1", bounce), "1"))
	require.NoError(t, err)
	require.Equal(t, 2, res.Suppressed)
	require.Equal(t, "hard_bounce", e.suppressed("s2@example.com"))
	res, err = e.svc.Deliver(e.ctx, "ses", ep.ID, http.Header{}, f.sign(t, notification("n2", complaint), "2"))
	require.NoError(t, err)
	require.Equal(t, 1, res.Suppressed)
	require.Equal(t, "complaint", e.suppressed("s3@example.com"))
	require.Equal(t, 1, f.fetches, "the certificate is cached")

	// Replay.
	res, err = e.svc.Deliver(e.ctx, "ses", ep.ID, http.Header{}, f.sign(t, notification("n2", complaint), "2"))
	require.NoError(t, err)
	require.Equal(t, 1, res.Replayed)

	reject := func(body []byte, why string) {
		t.Helper()
		_, err := e.svc.Deliver(e.ctx, "ses", ep.ID, http.Header{}, body)
		requireCode(t, err, apperr.Unauthorized)
		require.Empty(t, e.suppressed("x@example.com"), why)
	}
	evil := `{"eventType":"Complaint","complaint":{"complainedRecipients":[{"emailAddress":"x@example.com"}]}}`
	signed := f.sign(t, notification("n3", evil), "2")
	reject([]byte(strings.Replace(string(signed), "x@example.com", "y@example.com", 1)), "tampered body")
	other := notification("n4", evil)
	other["TopicArn"] = "arn:aws:sns:eu-west-1:999999999999:strangers"
	reject(f.sign(t, other, "2"), "topic not allowed")
	offList := notification("n5", evil)
	offList["SigningCertURL"] = "https://evil.example.com/SimpleNotificationService-abc.pem"
	reject(f.sign(t, offList, "2"), "certificate URL off the allow-list")
	badPath := notification("n6", evil)
	badPath["SigningCertURL"] = f.srv.URL + "/other.pem"
	reject(f.sign(t, badPath, "2"), "certificate path")
	v3 := notification("n7", evil)
	reject([]byte(strings.Replace(string(f.sign(t, v3, "2")), `"SignatureVersion":"2"`, `"SignatureVersion":"3"`, 1)), "unknown version")
	wrongKey := newFakeSNS(t)
	forged := notification("n8", evil)
	forged["SigningCertURL"] = f.certURL // our cert, another key
	reject(wrongKey.sign(t, forged, "2"), "signed by another key")

	// A subscription confirmation is recorded for the operator, never fetched.
	sub := map[string]string{"Type": "SubscriptionConfirmation", "MessageId": "c1", "TopicArn": topic, "Token": "tok",
		"Message": "You have chosen to subscribe", "SubscribeURL": "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&Token=tok",
		"Timestamp": "2026-01-01T00:00:00.000Z"}
	_, err = e.svc.Deliver(e.ctx, "ses", ep.ID, http.Header{}, f.sign(t, sub, "1"))
	require.NoError(t, err)
	got, err := e.svc.Get(e.ctx, e.account, ep.ID)
	require.NoError(t, err)
	require.NotNil(t, got.SubscribeURL)
	require.Equal(t, sub["SubscribeURL"], *got.SubscribeURL)
}

func TestSNSDefaultAllowList(t *testing.T) {
	t.Parallel()
	for host, ok := range map[string]bool{
		"sns.us-east-1.amazonaws.com": true, "sns.cn-north-1.amazonaws.com.cn": true,
		"sns.us-east-1.amazonaws.com.evil.com": false, "evil.com": false, "sns.amazonaws.com": false,
	} {
		require.Equal(t, ok, webhook.DefaultSNSCertHost.MatchString(host), host)
	}
}

// TestSNSCertFailuresCachedAndFetchesBounded: a certificate URL that fails is not
// fetched again on every delivery for a minute, and fetches run at most
// MaxCertFetches at a time, however many deliveries name new URLs at once.
func TestSNSCertFailuresCachedAndFetchesBounded(t *testing.T) {
	t.Parallel()
	f := newFakeSNS(t)
	var mu sync.Mutex
	fetches, inFlight, maxInFlight := map[string]int{}, 0, 0
	release := make(chan struct{})
	opts := f.options()
	opts.FetchCert = func(ctx context.Context, u string) ([]byte, error) {
		mu.Lock()
		fetches[u]++
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		if strings.Contains(u, "slow") {
			<-release
		}
		return nil, errors.New("connection refused")
	}
	e := setup(t, opts)
	ep, _ := e.create(webhook.CreateInput{Source: "ses", TopicARNs: []string{topic}})
	deliver := func(id, path string) error {
		m := notification(id, `{"eventType":"Bounce"}`)
		m["SigningCertURL"] = f.srv.URL + path
		_, err := e.svc.Deliver(e.ctx, "ses", ep.ID, http.Header{}, f.sign(t, m, "2"))
		return err
	}
	count := func(path string) int { mu.Lock(); defer mu.Unlock(); return fetches[f.srv.URL+path] }

	requireCode(t, deliver("a1", "/SimpleNotificationService-down.pem"), apperr.Unauthorized)
	requireCode(t, deliver("a2", "/SimpleNotificationService-down.pem"), apperr.Unauthorized)
	require.Equal(t, 1, count("/SimpleNotificationService-down.pem"), "the failure is cached")
	e.now = e.now.Add(webhook.CertFailureTTL + time.Second)
	requireCode(t, deliver("a3", "/SimpleNotificationService-down.pem"), apperr.Unauthorized)
	require.Equal(t, 2, count("/SimpleNotificationService-down.pem"), "and tried again once it expires")

	const n = 3 * webhook.MaxCertFetches
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = deliver(fmt.Sprint("b", i), fmt.Sprintf("/SimpleNotificationService-slow%d.pem", i%(n/3*2)))
		}()
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return inFlight >= webhook.MaxCertFetches },
		10*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	require.LessOrEqual(t, maxInFlight, webhook.MaxCertFetches)
	for i := range n / 3 * 2 {
		require.Equal(t, 1, count(fmt.Sprintf("/SimpleNotificationService-slow%d.pem", i)), "one fetch per URL at a time")
	}
}
