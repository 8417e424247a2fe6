// Package ssotest is an OpenID Connect provider for tests, on httptest: a
// discovery document, a JWKS, an authorization endpoint that signs in whoever
// the test says and redirects back with a code, and a token endpoint that checks
// the client secret, the redirect URI and the PKCE verifier (S256) before it
// answers an RS256 ID token. Knobs let a test make the provider misbehave (sign
// with another key, name another audience, send another nonce). Only tests
// import it.
package ssotest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Client credentials the provider knows.
const (
	ClientID     = "sendonce-test"
	ClientSecret = "s3cret-of-the-test-client"
	keyID        = "test-key-1"
)

// Provider is a running test provider.
type Provider struct {
	Issuer string

	srv *httptest.Server
	key *rsa.PrivateKey

	mu sync.Mutex
	// Email and EmailVerified are who the next authorization signs in.
	Email         string
	EmailVerified bool
	// Tamper changes the claims of the ID tokens issued (nil: none).
	Tamper func(*Claims)
	// SignWith signs ID tokens with another key, under the same key id (nil:
	// the key the JWKS publishes).
	SignWith *rsa.PrivateKey
	// SkipPKCE makes the token endpoint stop checking the verifier (to show a
	// test depends on it).
	SkipPKCE bool
	// VerifiersChecked counts token requests whose verifier matched.
	VerifiersChecked int

	codes map[string]grant
}

// Claims are an ID token's claims.
type Claims struct {
	Issuer        string   `json:"iss"`
	Subject       string   `json:"sub"`
	Audience      []string `json:"aud"`
	Expiry        int64    `json:"exp"`
	IssuedAt      int64    `json:"iat"`
	Nonce         string   `json:"nonce,omitempty"`
	Email         string   `json:"email,omitempty"`
	EmailVerified bool     `json:"email_verified"`
}

type grant struct {
	challenge, redirect, nonce, email string
	verified                          bool
}

// New starts a provider, stopped when the test ends.
func New(t testing.TB) *Provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{key: key, codes: map[string]grant{}, EmailVerified: true}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	p.Issuer = p.srv.URL
	return p
}

// OtherKey is a fresh RSA key (to sign tokens the provider never published).
func OtherKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Set changes the provider's knobs under its lock.
func (p *Provider) Set(fn func(p *Provider)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn(p)
}

// Checked returns VerifiersChecked.
func (p *Provider) Checked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.VerifiersChecked
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                p.Issuer,
		"authorization_endpoint":                p.Issuer + "/authorize",
		"token_endpoint":                        p.Issuer + "/token",
		"jwks_uri":                              p.Issuer + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
		"scopes_supported":                      []string{"openid", "email", "profile"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &p.key.PublicKey, KeyID: keyID, Algorithm: string(jose.RS256), Use: "sig"}}})
}

// authorize signs in Email at once (no page) and redirects back with a code.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	switch {
	case q.Get("client_id") != ClientID:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code", q.Get("code_challenge_method") != "S256", q.Get("code_challenge") == "",
		q.Get("state") == "", q.Get("redirect_uri") == "":
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), nonce: q.Get("nonce"),
		email: p.Email, verified: p.EmailVerified}
	p.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token redeems a code once, for the client that holds the secret, with the
// redirect URI and the verifier of the authorization.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	if id != ClientID || secret != ClientSecret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if r.PostFormValue("grant_type") != "authorization_code" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	code := r.PostFormValue("code")
	g, ok := p.codes[code]
	delete(p.codes, code)
	if !ok || g.redirect != r.PostFormValue("redirect_uri") {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	if base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		if !p.SkipPKCE {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant",
				"error_description": "PKCE verification failed <script>raw provider text</script>"})
			return
		}
	} else {
		p.VerifiersChecked++
	}
	now := time.Now()
	c := Claims{Issuer: p.Issuer, Subject: "user-" + g.email, Audience: []string{ClientID},
		Expiry: now.Add(5 * time.Minute).Unix(), IssuedAt: now.Unix(), Nonce: g.nonce, Email: g.email,
		EmailVerified: g.verified}
	if p.Tamper != nil {
		p.Tamper(&c)
	}
	key := p.key
	if p.SignWith != nil {
		key = p.SignWith
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: keyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	raw, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_token": rand.Text(), "token_type": "Bearer",
		"expires_in": 300, "id_token": raw})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
