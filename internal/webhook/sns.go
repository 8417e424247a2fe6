package webhook

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1" //nolint:gosec // SNS SignatureVersion 1 is SHA1withRSA; we verify what Amazon sends
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// snsMessage is the envelope Amazon SNS POSTs (SES notifications arrive through SNS;
// format in the SNS developer guide, "Parsing message formats").
type snsMessage struct {
	Type             string `json:"Type"`
	MessageID        string `json:"MessageId"`
	Token            string `json:"Token"`
	TopicArn         string `json:"TopicArn"`
	Subject          string `json:"Subject"`
	Message          string `json:"Message"`
	SubscribeURL     string `json:"SubscribeURL"`
	Timestamp        string `json:"Timestamp"`
	SignatureVersion string `json:"SignatureVersion"`
	Signature        string `json:"Signature"`
	SigningCertURL   string `json:"SigningCertURL"`
}

// stringToSign builds the "Key\nValue\n" text SNS signs: for a Notification
// Message, MessageId, Subject (if present), Timestamp, TopicArn, Type; for the
// (un)subscription confirmations Message, MessageId, SubscribeURL, Timestamp,
// Token, TopicArn, Type.
func (m *snsMessage) stringToSign() (string, error) {
	var b strings.Builder
	add := func(k, v string) { b.WriteString(k + "\n" + v + "\n") }
	switch m.Type {
	case "Notification":
		add("Message", m.Message)
		add("MessageId", m.MessageID)
		if m.Subject != "" {
			add("Subject", m.Subject)
		}
		add("Timestamp", m.Timestamp)
		add("TopicArn", m.TopicArn)
		add("Type", m.Type)
	case "SubscriptionConfirmation", "UnsubscribeConfirmation":
		add("Message", m.Message)
		add("MessageId", m.MessageID)
		add("SubscribeURL", m.SubscribeURL)
		add("Timestamp", m.Timestamp)
		add("Token", m.Token)
		add("TopicArn", m.TopicArn)
		add("Type", m.Type)
	default:
		return "", fmt.Errorf("unknown SNS message type %q", m.Type)
	}
	return b.String(), nil
}

// CertFetcher returns the PEM at an allow-listed SigningCertURL.
type CertFetcher func(ctx context.Context, url string) ([]byte, error)

// verifySNS checks an SNS message: the envelope is decoded (the signature is inside
// it), the TopicArn must be allow-listed for the endpoint, the certificate URL must be
// HTTPS on an allowed host with the documented path, and the RSA signature (v1 SHA1,
// v2 SHA256) must verify over the canonical string.
func (s *Service) verifySNS(ctx context.Context, body []byte, topics []string) (*snsMessage, error) {
	var m snsMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, sigErr("body is not an SNS message")
	}
	if !slices.Contains(topics, m.TopicArn) {
		return nil, sigErr("TopicArn is not allowed for this endpoint")
	}
	canonical, err := m.stringToSign()
	if err != nil {
		return nil, sigErr(err.Error())
	}
	var hash crypto.Hash
	var sum []byte
	switch m.SignatureVersion {
	case "1":
		h := sha1.Sum([]byte(canonical)) //nolint:gosec // see import
		hash, sum = crypto.SHA1, h[:]
	case "2":
		h := sha256.Sum256([]byte(canonical))
		hash, sum = crypto.SHA256, h[:]
	default:
		return nil, sigErr("unsupported SignatureVersion")
	}
	sig, err := base64.StdEncoding.DecodeString(m.Signature)
	if err != nil {
		return nil, sigErr("signature is not base64")
	}
	if err := checkCertURL(m.SigningCertURL, s.opts.SNSCertHost); err != nil {
		return nil, err
	}
	pub, err := s.certs.get(ctx, m.SigningCertURL, s.opts.FetchCert, s.opts.Now)
	if err != nil {
		return nil, sigErr("signing certificate: " + err.Error())
	}
	if err := rsa.VerifyPKCS1v15(pub, hash, sum, sig); err != nil {
		return nil, sigErr("SNS signature does not verify")
	}
	return &m, nil
}

var certPath = regexp.MustCompile(`^/SimpleNotificationService-[A-Za-z0-9]+\.pem$`)

// checkCertURL is the allow-list: we fetch nothing a stranger could point us at.
func checkCertURL(raw string, host *regexp.Regexp) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return sigErr("SigningCertURL must be a plain https URL")
	}
	if !host.MatchString(u.Host) || !certPath.MatchString(u.Path) {
		return sigErr("SigningCertURL is not on the allow-list")
	}
	return nil
}

// CertFailureTTL is how long a failed certificate fetch is remembered: a URL that
// does not answer is not fetched again on every delivery that names it.
const CertFailureTTL = time.Minute

// MaxCertFetches bounds the certificate fetches in flight at once, so deliveries
// naming many new URLs cannot turn us into a fetching amplifier.
const MaxCertFetches = 4

// maxCertFailures bounds the remembered failures (the allow-listed path admits any
// number of names); beyond it failures are not remembered, and the fetch bound holds.
const maxCertFailures = 1024

// certCache keeps parsed certificates by URL: Amazon rotates them rarely, and a
// delivery must not cost a fetch. Failures are kept for CertFailureTTL; one fetch per
// URL runs at a time, and callers asking meanwhile share its outcome.
type certCache struct {
	mu       sync.Mutex
	keys     map[string]*rsa.PublicKey
	failures map[string]certFailure
	inflight map[string]*certCall
	slots    chan struct{}
}

type certFailure struct {
	err   error
	until time.Time
}

// certCall is one fetch in flight; done is closed when key or err is set.
type certCall struct {
	done chan struct{}
	key  *rsa.PublicKey
	err  error
}

func newCertCache() *certCache {
	return &certCache{
		keys: map[string]*rsa.PublicKey{}, failures: map[string]certFailure{},
		inflight: map[string]*certCall{}, slots: make(chan struct{}, MaxCertFetches),
	}
}

func (c *certCache) get(ctx context.Context, u string, fetch CertFetcher, now func() time.Time) (*rsa.PublicKey, error) {
	c.mu.Lock()
	if k, ok := c.keys[u]; ok {
		c.mu.Unlock()
		return k, nil
	}
	if f, ok := c.failures[u]; ok && now().Before(f.until) {
		c.mu.Unlock()
		return nil, f.err
	}
	call, ok := c.inflight[u]
	if !ok {
		call = &certCall{done: make(chan struct{})}
		c.inflight[u] = call
		// The fetch outlives a caller that gives up: others may be waiting for it,
		// and the fetcher has its own timeout.
		go c.fetch(context.WithoutCancel(ctx), u, fetch, now, call)
	}
	c.mu.Unlock()
	select {
	case <-call.done:
		return call.key, call.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *certCache) fetch(ctx context.Context, u string, fetch CertFetcher, now func() time.Time, call *certCall) {
	c.slots <- struct{}{}
	call.key, call.err = fetchKey(ctx, u, fetch)
	<-c.slots
	c.mu.Lock()
	delete(c.inflight, u)
	switch {
	case call.err == nil:
		c.keys[u] = call.key
		delete(c.failures, u)
	case len(c.failures) < maxCertFailures:
		c.failures[u] = certFailure{err: call.err, until: now().Add(CertFailureTTL)}
	default:
		for k, f := range c.failures {
			if !now().Before(f.until) {
				delete(c.failures, k)
			}
		}
	}
	c.mu.Unlock()
	close(call.done)
}

func fetchKey(ctx context.Context, u string, fetch CertFetcher) (*rsa.PublicKey, error) {
	pemBytes, err := fetch(ctx, u)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, fmt.Errorf("no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("certificate key is not RSA")
	}
	return pub, nil
}

// httpsFetch is the default CertFetcher: an HTTPS GET with a short timeout and a
// size cap. (This outbound client is the one use of net/http in this package.)
func httpsFetch(ctx context.Context, u string) ([]byte, error) {
	return FetchWith(&http.Client{
		Timeout: 10 * time.Second,
		// The allow-list names the host we fetch from: a redirect must not take us elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	})(ctx, u)
}

// FetchWith returns a CertFetcher using client; tests pass an httptest TLS client.
func FetchWith(client *http.Client) CertFetcher {
	return func(ctx context.Context, u string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	}
}
