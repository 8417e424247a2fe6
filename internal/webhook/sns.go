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

// snsMessage is the envelope SNS POSTs (REFERENCE §3.3, Amazon SES via SNS).
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
	pub, err := s.certs.get(ctx, m.SigningCertURL, s.opts.FetchCert)
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

// certCache keeps parsed certificates by URL: Amazon rotates them rarely, and a
// delivery must not cost a fetch.
type certCache struct {
	mu   sync.Mutex
	keys map[string]*rsa.PublicKey
}

func newCertCache() *certCache { return &certCache{keys: map[string]*rsa.PublicKey{}} }

func (c *certCache) get(ctx context.Context, u string, fetch CertFetcher) (*rsa.PublicKey, error) {
	c.mu.Lock()
	k, ok := c.keys[u]
	c.mu.Unlock()
	if ok {
		return k, nil
	}
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
	c.mu.Lock()
	c.keys[u] = pub
	c.mu.Unlock()
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
