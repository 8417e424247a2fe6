package dkim

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/dnscheck"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// Sealer encrypts private keys at rest (sender.KeyRing, SENDONCE_SECRETS_KEY).
type Sealer interface {
	Seal(plaintext, aad []byte) (keyID string, sealed []byte, err error)
	Open(keyID string, sealed, aad []byte) ([]byte, error)
}

// DefaultCacheTTL is how long a signing process keeps a domain's active key (or
// the absence of one) before asking the database again: an activation reaches
// every executor within it. The previous key stays published until deleted, so
// a message signed with it in that window still verifies.
const DefaultCacheTTL = 30 * time.Second

// Service manages an account's DKIM keys and signs with them. Every method
// takes the account first.
type Service struct {
	pool *pgxpool.Pool
	ring Sealer
	// CacheTTL overrides DefaultCacheTTL; negative means no cache.
	CacheTTL time.Duration
	// Now is the cache's clock; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	cache map[cacheKey]cachedKey
}

type cacheKey struct {
	account int64
	domain  string
}

type cachedKey struct {
	k  *Key // nil: the domain has no active key
	at time.Time
}

// NewService returns the key service of pool, sealing with ring.
func NewService(pool *pgxpool.Pool, ring Sealer) *Service {
	return &Service{pool: pool, ring: ring, cache: map[cacheKey]cachedKey{}}
}

// KeyInfo is a stored key, without its private half.
type KeyInfo struct {
	ID          int64
	Domain      string
	Selector    string
	Algorithm   string
	Active      bool
	ActivatedAt *time.Time
	CreatedAt   time.Time
	// RecordName and RecordValue are the TXT record to publish.
	RecordName, RecordValue string
	// PublicKey is the record's p= value.
	PublicKey string
}

func toInfo(r store.DkimKey) KeyInfo {
	return KeyInfo{ID: r.ID, Domain: r.Domain, Selector: r.Selector, Algorithm: r.Algorithm, Active: r.Active,
		ActivatedAt: r.ActivatedAt, CreatedAt: r.CreatedAt, RecordName: RecordName(r.Selector, r.Domain),
		RecordValue: TXTValue(r.Algorithm, r.PublicKey), PublicKey: r.PublicKey}
}

// labelRe is one DNS label (RFC 1035 §2.3.1 with digits first allowed, RFC 1123).
var labelRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// NormalizeDomain returns domain lower-cased, or a 422 naming pointer when it is
// not a public domain name.
func NormalizeDomain(domain, pointer string) (string, error) {
	d, err := dnscheck.Normalize(domain)
	if err != nil {
		return "", apperr.Invalidf(pointer, "%s", err.Error())
	}
	return d, nil
}

// aad binds a sealed key to its account, domain and selector: a ciphertext
// copied onto another row does not decrypt there.
func aad(accountID int64, domain, selector string) []byte {
	return []byte("sendonce.dkim.v1:" + strconv.FormatInt(accountID, 10) + ":" + domain + ":" + selector)
}

// newSelector is a generated selector: the date and a random tail, so that a
// rotation's selector differs from the last one's and says when it was made.
func newSelector(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "so" + now.UTC().Format("20060102") + "-" + hex.EncodeToString(b[:])
}

// Create generates a key for domain (alg "" means RSA 2048; selector "" means a
// generated one) and stores it inactive.
func (s *Service) Create(ctx context.Context, accountID int64, domain, selector, alg string) (KeyInfo, error) {
	d, err := NormalizeDomain(domain, "/domain")
	if err != nil {
		return KeyInfo{}, err
	}
	if alg == "" {
		alg = RSA2048
	}
	if alg != RSA2048 && alg != Ed25519 {
		return KeyInfo{}, apperr.Invalidf("/algorithm", "algorithm must be %s", strings.Join(Algorithms, " or "))
	}
	if selector == "" {
		selector = newSelector(s.now())
	}
	selector = strings.ToLower(selector)
	if !labelRe.MatchString(selector) {
		return KeyInfo{}, apperr.Invalidf("/selector", "selector must be one DNS label: 1 to 63 letters, digits and hyphens, not starting or ending with a hyphen")
	}
	pkcs8, public, err := Generate(alg)
	if err != nil {
		return KeyInfo{}, err
	}
	keyID, sealed, err := s.ring.Seal(pkcs8, aad(accountID, d, selector))
	if err != nil {
		return KeyInfo{}, apperr.New(apperr.Invalid, "%s", strings.Replace(err.Error(), "sender credentials", "DKIM keys", 1))
	}
	var row store.DkimKey
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		row, err = store.New(tx).DKIMKeyCreate(ctx, store.DKIMKeyCreateParams{AccountID: accountID, Domain: d,
			Selector: selector, Algorithm: alg, PublicKey: public, SecretKeyID: keyID, Secret: sealed})
		if err == nil {
			audit.SetTarget(ctx, strconv.FormatInt(row.ID, 10)) // the entry is written as this transaction commits
		}
		return err
	})
	if err != nil {
		err = postgres.Error(err, "a DKIM key with this selector for this domain")
		if apperr.Is(err, apperr.Conflict) {
			e := apperr.Invalidf("/selector", "the domain already has a key with selector %s", selector)
			return KeyInfo{}, e
		}
		return KeyInfo{}, err
	}
	return toInfo(row), nil
}

// List returns the account's keys of domain ("" for every domain).
func (s *Service) List(ctx context.Context, accountID int64, domain string) ([]KeyInfo, error) {
	if domain != "" {
		var err error
		if domain, err = NormalizeDomain(domain, "/domain"); err != nil {
			return nil, err
		}
	}
	rows, err := store.New(s.pool).DKIMKeyList(ctx, store.DKIMKeyListParams{AccountID: accountID, Domain: domain})
	if err != nil {
		return nil, postgres.Error(err, "DKIM key")
	}
	out := make([]KeyInfo, len(rows))
	for i, r := range rows {
		out[i] = toInfo(r)
	}
	return out, nil
}

// Get returns one key of the account's domain.
func (s *Service) Get(ctx context.Context, accountID int64, domain string, id int64) (KeyInfo, error) {
	d, err := NormalizeDomain(domain, "/domain")
	if err != nil {
		return KeyInfo{}, apperr.New(apperr.NotFound, "DKIM key not found")
	}
	r, err := store.New(s.pool).DKIMKeyGet(ctx, store.DKIMKeyGetParams{AccountID: accountID, Domain: d, ID: id})
	if err != nil {
		return KeyInfo{}, postgres.Error(err, "DKIM key")
	}
	return toInfo(r), nil
}

// Activate makes key id its domain's signing key; the domain's previous active
// key stops signing and stays until deleted. Activating the active key changes
// nothing.
func (s *Service) Activate(ctx context.Context, accountID int64, domain string, id int64) (KeyInfo, error) {
	d, err := NormalizeDomain(domain, "/domain")
	if err != nil {
		return KeyInfo{}, apperr.New(apperr.NotFound, "DKIM key not found")
	}
	var row store.DkimKey
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		// Lock the key first: a missing key must not deactivate the current one.
		if _, err := q.DKIMKeyGet(ctx, store.DKIMKeyGetParams{AccountID: accountID, Domain: d, ID: id}); err != nil {
			return err
		}
		if err := q.DKIMKeyDeactivateOthers(ctx, store.DKIMKeyDeactivateOthersParams{AccountID: accountID, Domain: d, ID: id}); err != nil {
			return err
		}
		row, err = q.DKIMKeyActivate(ctx, store.DKIMKeyActivateParams{AccountID: accountID, Domain: d, ID: id})
		return err
	})
	if err != nil {
		return KeyInfo{}, postgres.Error(err, "DKIM key")
	}
	s.forget(accountID, d)
	return toInfo(row), nil
}

// Delete removes an inactive key (409 for the active one: activate another first).
func (s *Service) Delete(ctx context.Context, accountID int64, domain string, id int64) error {
	d, err := NormalizeDomain(domain, "/domain")
	if err != nil {
		return apperr.New(apperr.NotFound, "DKIM key not found")
	}
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		n, err := q.DKIMKeyDelete(ctx, store.DKIMKeyDeleteParams{AccountID: accountID, Domain: d, ID: id})
		if err != nil {
			return postgres.Error(err, "DKIM key")
		}
		if n == 1 {
			return nil
		}
		if _, err := q.DKIMKeyGet(ctx, store.DKIMKeyGetParams{AccountID: accountID, Domain: d, ID: id}); err != nil {
			return postgres.Error(err, "DKIM key")
		}
		return apperr.New(apperr.Conflict, "the key is the domain's active signing key: activate another key first")
	})
}

// Active returns the account's active key of domain, nil when it has none.
func (s *Service) Active(ctx context.Context, accountID int64, domain string) (*KeyInfo, error) {
	r, err := store.New(s.pool).DKIMKeyActive(ctx, store.DKIMKeyActiveParams{AccountID: accountID, Domain: domain})
	if postgres.NoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, postgres.Error(err, "DKIM key")
	}
	k := toInfo(r)
	return &k, nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Service) ttl() time.Duration {
	if s.CacheTTL == 0 {
		return DefaultCacheTTL
	}
	return s.CacheTTL
}

func (s *Service) forget(accountID int64, domain string) {
	s.mu.Lock()
	delete(s.cache, cacheKey{accountID, domain})
	s.mu.Unlock()
}

// signingKey returns the account's active key of domain, parsed (nil: none),
// from the cache when it is fresh.
func (s *Service) signingKey(ctx context.Context, accountID int64, domain string) (*Key, error) {
	ck := cacheKey{accountID, domain}
	now := s.now()
	if ttl := s.ttl(); ttl > 0 {
		s.mu.Lock()
		e, ok := s.cache[ck]
		s.mu.Unlock()
		if ok && now.Sub(e.at) < ttl {
			return e.k, nil
		}
	}
	var k *Key
	r, err := store.New(s.pool).DKIMKeyActive(ctx, store.DKIMKeyActiveParams{AccountID: accountID, Domain: domain})
	switch {
	case postgres.NoRows(err):
	case err != nil:
		return nil, err
	default:
		pkcs8, err := s.ring.Open(r.SecretKeyID, r.Secret, aad(r.AccountID, r.Domain, r.Selector))
		if err != nil {
			return nil, fmt.Errorf("%w: DKIM key %s of %s: %w", provider.ErrSigningKey, r.Selector, r.Domain, err)
		}
		signer, err := ParsePrivate(pkcs8)
		if err != nil {
			return nil, fmt.Errorf("%w: DKIM key %s of %s: %w", provider.ErrSigningKey, r.Selector, r.Domain, err)
		}
		k = &Key{Domain: r.Domain, Selector: r.Selector, Signer: signer}
	}
	if s.ttl() > 0 {
		s.mu.Lock()
		if len(s.cache) > 10_000 {
			s.cache = map[cacheKey]cachedKey{}
		}
		s.cache[ck] = cachedKey{k: k, at: now}
		s.mu.Unlock()
	}
	return k, nil
}

// Signature returns the DKIM-Signature header field for msg, sent by the
// account From the address from, signed with the active key of from's domain;
// nil when that domain has no active key (the message goes unsigned).
func (s *Service) Signature(ctx context.Context, accountID int64, from string, msg []byte) ([]byte, error) {
	at := strings.LastIndexByte(from, '@')
	if at < 0 {
		return nil, nil
	}
	domain := strings.ToLower(from[at+1:])
	k, err := s.signingKey(ctx, accountID, domain)
	if err != nil || k == nil {
		return nil, err
	}
	return k.Signature(msg)
}

// AccountSigner signs the messages of one account (the SMTP provider of one of
// its senders).
type AccountSigner struct {
	svc       *Service
	accountID int64
}

// For returns the signer of the account's messages.
func (s *Service) For(accountID int64) *AccountSigner {
	return &AccountSigner{svc: s, accountID: accountID}
}

// Signature is Service.Signature for the signer's account.
func (a *AccountSigner) Signature(ctx context.Context, from string, msg []byte) ([]byte, error) {
	return a.svc.Signature(ctx, a.accountID, from, msg)
}
