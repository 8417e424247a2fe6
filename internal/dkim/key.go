// Package dkim holds the DKIM keys of an account's sending domains and signs
// the messages SMTP senders send From those domains (RFC 6376, RFC 8463 for
// Ed25519), through github.com/emersion/go-msgauth.
//
// A key is generated here (RSA 2048 by default, Ed25519 on request), its private
// half sealed at rest as sender credentials are (SENDONCE_SECRETS_KEY) and never
// returned; its public half is answered as the TXT record to publish at
// <selector>._domainkey.<domain>. One key per domain is active: it signs. A
// rotation activates another; the previous one stays, inactive, until deleted,
// so that mail signed with it and still in transit keeps verifying while its
// record is published.
package dkim

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/emersion/go-msgauth/dkim"
)

// Algorithms.
const (
	RSA2048 = "rsa-2048"
	Ed25519 = "ed25519"
)

// Algorithms lists the algorithms a key may have, the default first.
var Algorithms = []string{RSA2048, Ed25519}

// HeaderKeys are the header fields a signature covers (h=), in the order they
// are hashed. From is listed twice so that a second From added on the way
// breaks the signature (RFC 6376 §8.15); fields a message lacks (Cc, Reply-To,
// the List-* pair of a transactional message) are signed as absent, so none can
// be added later either. List-Unsubscribe and List-Unsubscribe-Post must be
// covered for a receiver to offer one-click unsubscribe (RFC 8058 §4).
var HeaderKeys = []string{"From", "From", "Reply-To", "To", "Cc", "Subject", "Date", "Message-ID",
	"MIME-Version", "Content-Type", "List-Unsubscribe", "List-Unsubscribe-Post"}

// Generate makes a key of algorithm alg and returns its private half as PKCS #8
// DER and its public half as the p= value of its TXT record.
func Generate(alg string) (pkcs8 []byte, public string, err error) {
	var priv crypto.Signer
	switch alg {
	case RSA2048, "":
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case Ed25519:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, "", fmt.Errorf("unknown DKIM algorithm %q", alg)
	}
	if err != nil {
		return nil, "", err
	}
	if pkcs8, err = x509.MarshalPKCS8PrivateKey(priv); err != nil {
		return nil, "", err
	}
	public, err = PublicValue(priv.Public())
	return pkcs8, public, err
}

// PublicValue is the p= of a public key: the DER SubjectPublicKeyInfo for RSA
// (RFC 6376 §3.6.1), the raw 32 bytes for Ed25519 (RFC 8463 §4.2), in base64.
func PublicValue(pub crypto.PublicKey) (string, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		der, err := x509.MarshalPKIXPublicKey(k)
		if err != nil {
			return "", err
		}
		return base64.StdEncoding.EncodeToString(der), nil
	case ed25519.PublicKey:
		return base64.StdEncoding.EncodeToString(k), nil
	}
	return "", fmt.Errorf("unsupported DKIM key type %T", pub)
}

// keyType is the k= tag of an algorithm.
func keyType(alg string) string {
	if alg == Ed25519 {
		return "ed25519"
	}
	return "rsa"
}

// TXTValue is the record to publish for a key of algorithm alg whose p= is public.
func TXTValue(alg, public string) string {
	return "v=DKIM1; k=" + keyType(alg) + "; p=" + public
}

// RecordName is where a key's TXT record goes.
func RecordName(selector, domain string) string { return selector + "._domainkey." + domain }

// Published reports whether a TXT record found at a key's name carries that key:
// a DKIM1 record of the same key type whose p= equals public (whitespace and
// the splitting into strings ignored).
func Published(record, alg, public string) bool {
	tags := map[string]string{}
	for _, part := range strings.Split(record, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		tags[strings.TrimSpace(k)] = strings.Join(strings.Fields(v), "")
	}
	if v, ok := tags["v"]; ok && v != "DKIM1" {
		return false
	}
	k := tags["k"]
	if k == "" {
		k = "rsa"
	}
	return k == keyType(alg) && tags["p"] != "" && tags["p"] == public
}

// ParsePrivate reads what Generate returned.
func ParsePrivate(pkcs8 []byte) (crypto.Signer, error) {
	k, err := x509.ParsePKCS8PrivateKey(pkcs8)
	if err != nil {
		return nil, err
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported DKIM key type %T", k)
	}
	switch s.Public().(type) {
	case *rsa.PublicKey, ed25519.PublicKey:
		return s, nil
	}
	return nil, fmt.Errorf("unsupported DKIM key type %T", k)
}

// Key is a parsed signing key.
type Key struct {
	Domain, Selector string
	Signer           crypto.Signer
}

// errNoHeaderEnd is a message without the empty line that ends its header.
var errNoHeaderEnd = errors.New("dkim: the message has no end of header")

// Signature returns the DKIM-Signature header field (name, value and final
// CRLF) of msg, a whole RFC 5322 message with CRLF line ends, signed with k:
// relaxed/relaxed canonicalization, SHA-256, the fields of HeaderKeys.
func (k *Key) Signature(msg []byte) ([]byte, error) {
	if !bytes.Contains(msg, []byte("\r\n\r\n")) {
		return nil, errNoHeaderEnd
	}
	s, err := dkim.NewSigner(&dkim.SignOptions{Domain: k.Domain, Selector: k.Selector, Signer: k.Signer,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed, BodyCanonicalization: dkim.CanonicalizationRelaxed,
		HeaderKeys: HeaderKeys})
	if err != nil {
		return nil, err
	}
	if _, err := s.Write(msg); err != nil {
		s.Close() //nolint:errcheck // the write error is the one to report
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	return []byte(s.Signature()), nil
}
