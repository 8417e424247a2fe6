// Package sso is single sign-on per account through OpenID Connect: an account's
// settings (issuer, client id, a sealed client secret, the email domains it
// vouches for, the role of new people), and the sign-in itself — the
// authorization code flow with PKCE (S256), state and nonce, the ID token
// verified by github.com/coreos/go-oidc (signature, issuer, audience, expiry),
// a verified address in an allowed domain — ending in a session of the account.
// Every connection to a provider goes through internal/egress.
package sso

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/oauth2"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/session"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/user"
)

const (
	// FlowTTL is how long a sign-in may stay at the provider.
	FlowTTL = 10 * time.Minute
	// CallbackPath is where the provider sends the browser back: PublicURL +
	// CallbackPath is the redirect URI to register.
	CallbackPath = "/sso/callback"
	// providerTTL is how long a provider's discovery document is reused (its keys
	// are refetched by go-oidc when a token names one it does not know).
	providerTTL = 15 * time.Minute
	// timeout bounds each call to a provider.
	timeout = 10 * time.Second
)

// Options configure a Service.
type Options struct {
	// PublicURL is the service's public base URL (SENDONCE_PUBLIC_URL).
	PublicURL string
	// Guard is the egress guard providers are reached through; AllowHTTP lets an
	// issuer be http (a provider on a development machine).
	Guard     egress.Guard
	AllowHTTP bool
	// Now is the clock (tests); nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Service keeps accounts' settings and runs their sign-ins.
type Service struct {
	pool     *pgxpool.Pool
	ring     *sender.KeyRing
	users    *user.Service
	sessions *session.Service
	opts     Options
	client   *http.Client

	mu        sync.Mutex
	providers map[string]cachedProvider
}

type cachedProvider struct {
	p       *oidc.Provider
	fetched time.Time
}

// NewService returns a Service sealing client secrets with ring (the sender
// credentials' key ring), making people with users and sessions with sessions.
func NewService(pool *pgxpool.Pool, ring *sender.KeyRing, users *user.Service, sessions *session.Service, o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.PublicURL = strings.TrimRight(o.PublicURL, "/")
	return &Service{pool: pool, ring: ring, users: users, sessions: sessions, opts: o,
		client: o.Guard.Client(nil, timeout), providers: map[string]cachedProvider{}}
}

// RedirectURL is the redirect URI every account registers at its provider.
func (s *Service) RedirectURL() string { return s.opts.PublicURL + CallbackPath }

func (s *Service) clientContext(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, s.client)
}

// provider returns the provider of issuer from its discovery document (cached).
// go-oidc refuses a document whose issuer is not exactly issuer.
func (s *Service) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	now := s.opts.Now()
	s.mu.Lock()
	c, ok := s.providers[issuer]
	s.mu.Unlock()
	if ok && now.Sub(c.fetched) < providerTTL {
		return c.p, nil
	}
	// The provider keeps this context for fetching its keys later: it must
	// outlive the request (only its HTTP client is kept, by go-oidc's design).
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := oidc.NewProvider(s.clientContext(dctx), issuer)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.providers[issuer] = cachedProvider{p: p, fetched: now}
	s.mu.Unlock()
	return p, nil
}

// flowSecrets are what the callback needs and the browser must not hold.
type flowSecrets struct {
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
}

// Start begins a sign-in of email: it finds the account whose settings vouch for
// the address's domain (accountPublicID picks one when several do), records the
// flow, and returns the provider's authorization URL and the state the browser's
// cookie must carry back.
func (s *Service) Start(ctx context.Context, email, accountPublicID string) (authURL, state string, err error) {
	addr, err := address.Parse(email)
	if err != nil {
		return "", "", apperr.Invalidf("/email", "%v", err)
	}
	domain := addr.Lower[strings.LastIndexByte(addr.Lower, '@')+1:]
	q := store.New(s.pool)
	matches, err := q.SSOByDomain(ctx, domain)
	if err != nil {
		return "", "", err
	}
	var accountID int64
	switch {
	case accountPublicID != "":
		for _, m := range matches {
			if m.PublicID == accountPublicID {
				accountID = m.AccountID
			}
		}
	case len(matches) == 1:
		accountID = matches[0].AccountID
	case len(matches) > 1:
		return "", "", apperr.New(apperr.Conflict, "several accounts sign in %s addresses through single sign-on: "+
			"add account=<the account's public id> (your administrator has it) to choose one", domain)
	}
	if accountID == 0 {
		return "", "", apperr.New(apperr.NotFound, "no account signs in this address through single sign-on: "+
			"sign in with your password or an email link")
	}
	cfg, _, err := s.config(ctx, accountID)
	if err != nil {
		return "", "", err
	}
	state = randomToken()
	fs := flowSecrets{Nonce: randomToken(), Verifier: oauth2.GenerateVerifier()}
	plain, _ := json.Marshal(fs)
	keyID, sealed, err := s.ring.Seal(plain, flowAAD(hashOf(state)))
	if err != nil {
		return "", "", err
	}
	now := s.opts.Now()
	if err := q.SSOFlowCreate(ctx, store.SSOFlowCreateParams{AccountID: accountID, StateHash: hashOf(state),
		KeyID: keyID, Sealed: sealed, ExpiresAt: now.Add(FlowTTL)}); err != nil {
		return "", "", err
	}
	_, _ = q.SSOFlowPurge(ctx, now.Add(-time.Hour))
	authURL = cfg.AuthCodeURL(state, oidc.Nonce(fs.Nonce), oauth2.S256ChallengeOption(fs.Verifier),
		oauth2.SetAuthURLParam("login_hint", addr.Email))
	return authURL, state, nil
}

// The callback's refusals. Each is the same kind (401) and says what to do; the
// cause is logged, and nothing a provider sent is repeated to the browser.
var (
	errState    = apperr.New(apperr.Unauthorized, "this sign-in is unknown, used, expired or was started in another browser: start again")
	errProvider = apperr.New(apperr.Unauthorized, "the identity provider did not sign you in: start again, or ask your administrator")
	errToken    = apperr.New(apperr.Unauthorized, "the identity provider's answer could not be verified: ask your administrator to check the single sign-on settings")
	errEmail    = apperr.New(apperr.Unauthorized, "the identity provider did not vouch for a verified email address of a domain this account allows")
	errOff      = apperr.New(apperr.Unauthorized, "single sign-on is not enabled for this account")
)

// Callback is what the provider sent the browser back with.
type Callback struct {
	// State and Code are the query's; Error is the provider's error code, if any.
	State, Code, Error string
	// CookieState is the state the browser's flow cookie holds.
	CookieState string
	// Replacing is the session token the browser held before, which ends.
	Replacing string
}

// Finish completes a sign-in: the state is the browser's own and used once, the
// code is exchanged with the flow's PKCE verifier, the ID token verified
// (signature by the provider's keys, issuer, audience, expiry, nonce), its address
// verified and of an allowed domain. The person is found or made a member (new
// people get the default role, members keep theirs) and a new session starts.
func (s *Service) Finish(ctx context.Context, cb Callback) (session.Session, error) {
	log := s.opts.Logger
	if !wellFormed(cb.State) || len(cb.CookieState) != len(cb.State) ||
		!constantEqual(cb.State, cb.CookieState) {
		return session.Session{}, errState
	}
	now := s.opts.Now()
	flow, err := store.New(s.pool).SSOFlowUse(ctx, store.SSOFlowUseParams{Now: &now, StateHash: hashOf(cb.State)})
	if postgres.NoRows(err) {
		return session.Session{}, errState
	}
	if err != nil {
		return session.Session{}, err
	}
	plain, err := s.ring.Open(flow.KeyID, flow.Sealed, flowAAD(hashOf(cb.State)))
	if err != nil {
		return session.Session{}, err
	}
	var fs flowSecrets
	if err := json.Unmarshal(plain, &fs); err != nil {
		return session.Session{}, err
	}
	if cb.Error != "" || cb.Code == "" {
		log.Info("sso: provider answered an error", "account_id", flow.AccountID, "error", truncate(cb.Error, 64))
		return session.Session{}, errProvider
	}
	cfg, set, err := s.config(ctx, flow.AccountID)
	if err != nil {
		return session.Session{}, err
	}
	p, err := s.provider(ctx, set.IssuerUrl)
	if err != nil {
		log.Info("sso: issuer discovery failed", "account_id", flow.AccountID, "err", err)
		return session.Session{}, errProvider
	}
	cctx, cancel := context.WithTimeout(s.clientContext(ctx), timeout)
	defer cancel()
	tok, err := cfg.Exchange(cctx, cb.Code, oauth2.VerifierOption(fs.Verifier))
	if err != nil {
		log.Info("sso: code exchange refused", "account_id", flow.AccountID, "err", err)
		return session.Session{}, errProvider
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		log.Info("sso: token answer without id_token", "account_id", flow.AccountID)
		return session.Session{}, errToken
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: set.ClientID, Now: s.opts.Now}).Verify(cctx, raw)
	if err != nil {
		log.Info("sso: ID token refused", "account_id", flow.AccountID, "err", err)
		return session.Session{}, errToken
	}
	if !constantEqual(idt.Nonce, fs.Nonce) {
		log.Info("sso: ID token nonce mismatch", "account_id", flow.AccountID)
		return session.Session{}, errToken
	}
	email, err := verifiedEmail(idt, set.AllowedDomains)
	if err != nil {
		log.Info("sso: address refused", "account_id", flow.AccountID, "err", err)
		return session.Session{}, errEmail
	}
	userID, created, err := s.users.EnsureMember(ctx, flow.AccountID, email, set.DefaultRole)
	if err != nil {
		return session.Session{}, err
	}
	if created {
		log.Info("sso: new member", "account_id", flow.AccountID, "user_id", userID, "role", set.DefaultRole)
	}
	return s.sessions.SignInUserViaSSO(ctx, userID, flow.AccountID, cb.Replacing)
}

// config is the account's enabled settings as an OAuth 2 client.
func (s *Service) config(ctx context.Context, accountID int64) (*oauth2.Config, store.AccountSso, error) {
	row, err := store.New(s.pool).SSOGet(ctx, accountID)
	if postgres.NoRows(err) || (err == nil && !row.Enabled) {
		return nil, row, errOff
	}
	if err != nil {
		return nil, row, err
	}
	secret, err := s.ring.Open(row.SecretKeyID, row.SecretSealed, secretAAD(accountID))
	if err != nil {
		return nil, row, fmt.Errorf("sso: client secret of account %d: %w", accountID, err)
	}
	p, err := s.provider(ctx, row.IssuerUrl)
	if err != nil {
		s.opts.Logger.Info("sso: issuer discovery failed", "account_id", accountID, "err", err)
		return nil, row, apperr.New(apperr.Unavailable, "the account's identity provider cannot be reached: try again later, or ask your administrator")
	}
	return &oauth2.Config{ClientID: row.ClientID, ClientSecret: string(secret), Endpoint: p.Endpoint(),
		RedirectURL: s.RedirectURL(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}, row, nil
}

// verifiedEmail is the token's address when the provider says it verified it
// and its domain is one of domains.
func verifiedEmail(idt *oidc.IDToken, domains []string) (string, error) {
	var c struct {
		Email         string          `json:"email"`
		EmailVerified json.RawMessage `json:"email_verified"`
	}
	if err := idt.Claims(&c); err != nil {
		return "", err
	}
	// Some providers send the boolean as a string.
	if v := string(c.EmailVerified); v != "true" && v != `"true"` {
		return "", errors.New("email_verified is not true")
	}
	a, err := address.Parse(c.Email)
	if err != nil {
		return "", fmt.Errorf("email: %w", err)
	}
	domain := a.Lower[strings.LastIndexByte(a.Lower, '@')+1:]
	for _, d := range domains {
		if d == domain {
			return a.Email, nil
		}
	}
	return "", fmt.Errorf("domain %q is not allowed", domain)
}

// randomToken is 32 random bytes, unpadded base64url (43 characters).
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// wellFormed refuses, before the database sees it, anything randomToken cannot have made.
func wellFormed(t string) bool {
	if len(t) != 43 {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(t)
	return err == nil && len(b) == 32
}

func hashOf(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

func constantEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return ha == hb
}

func flowAAD(stateHash []byte) []byte {
	return append([]byte("sendonce sso flow\x00"), stateHash...)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
