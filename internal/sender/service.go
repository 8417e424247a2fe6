package sender

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dkim"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/pacing"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/quota"
	"github.com/sendonce/sendonce/internal/store"
)

// Service manages senders. Every method takes the account first.
type Service struct {
	pool  *pgxpool.Pool
	ring  *KeyRing
	guard egress.Guard
	// noChunking is SENDONCE_SMTP_CHUNKING=false for smtp senders.
	noChunking bool
	// dkim holds the accounts' DKIM keys (sealed with ring) that smtp senders sign with.
	dkim *dkim.Service
	// returnPath makes the VERP Return-Path of a send for smtp senders with a
	// bounce domain; nil leaves MAIL FROM the From address.
	returnPath ReturnPath
}

// ReturnPath returns the envelope sender naming the send sendID of accountID at
// domain (bounce.VERP.Address).
type ReturnPath func(accountID, sendID int64, domain string) string

// WithReturnPath sets how smtp senders with a bounce_domain name each send in
// their MAIL FROM.
func WithReturnPath(rp ReturnPath) Option { return func(s *Service) { s.returnPath = rp } }

// Option configures a Service.
type Option func(*Service)

// WithGuard sets where senders may connect (checked when a destination is saved
// and on every connection). Without it only public addresses are allowed.
func WithGuard(g egress.Guard) Option { return func(s *Service) { s.guard = g } }

// WithSMTPChunking says whether smtp senders may send a message with its
// envelope in one write to a relay that offers CHUNKING (the default: yes).
func WithSMTPChunking(on bool) Option { return func(s *Service) { s.noChunking = !on } }

// NewService returns a sender service encrypting with ring (which may be empty:
// senders without credentials still work, and storing one is refused).
func NewService(pool *pgxpool.Pool, ring *KeyRing, opts ...Option) *Service {
	if ring == nil {
		ring = &KeyRing{}
	}
	s := &Service{pool: pool, ring: ring, dkim: dkim.NewService(pool, ring)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// DKIM returns the service of the accounts' DKIM keys, sealed with the same
// ring as sender credentials; smtp senders sign with their active keys.
func (s *Service) DKIM() *dkim.Service { return s.dkim }

// aad binds a ciphertext to its sender (and account), so a ciphertext copied onto
// another sender's row, whose destination may differ, does not decrypt there.
func aad(accountID, senderID int64) []byte {
	return []byte("sendonce.sender.v2:" + strconv.FormatInt(accountID, 10) + ":" + strconv.FormatInt(senderID, 10))
}

// aadV1 is the binding of ciphertexts written before they were bound to their
// sender: the account only. They are still read; `sendonce senders
// rotate-secrets` re-seals them bound to their sender.
func aadV1(accountID int64) []byte {
	return []byte("sendonce.sender.v1:" + strconv.FormatInt(accountID, 10))
}

// openSecret decrypts a stored ciphertext of sender id: bound to the sender, else
// (legacy true) in the account-only form of older rows.
func openSecret(ring *KeyRing, keyID string, sealed []byte, accountID, id int64) (pt []byte, legacy bool, err error) {
	pt, err = ring.Open(keyID, sealed, aad(accountID, id))
	if err == nil {
		return pt, false, nil
	}
	if old, errV1 := ring.Open(keyID, sealed, aadV1(accountID)); errV1 == nil {
		return old, true, nil
	}
	return nil, false, err
}

// seal encrypts sender id's credentials (nil, "" for none).
func (s *Service) seal(accountID, id int64, c Credentials) (keyID string, sealed []byte, hnt string, err error) {
	if c.empty() {
		return "", nil, "", nil
	}
	pt, _ := json.Marshal(c)
	keyID, sealed, err = s.ring.Seal(pt, aad(accountID, id))
	if err != nil {
		return "", nil, "", apperr.New(apperr.Invalid, "%s", err.Error())
	}
	return keyID, sealed, hint(c.secret()), nil
}

// open decrypts a row's credentials.
func (s *Service) open(r store.Sender) (Credentials, error) {
	var c Credentials
	if r.Secret == nil {
		return c, nil
	}
	pt, _, err := openSecret(s.ring, r.SecretKeyID, r.Secret, r.AccountID, r.ID)
	if err != nil {
		return c, fmt.Errorf("sender %d: credentials: %w", r.ID, err)
	}
	return c, json.Unmarshal(pt, &c)
}

func toSender(r store.Sender) Sender {
	var st Settings
	_ = json.Unmarshal(r.Settings, &st)
	allowed := r.AllowedFrom
	if allowed == nil {
		allowed = []string{}
	}
	limits := []pacing.DomainLimit{}
	_ = json.Unmarshal(r.DomainLimits, &limits)
	var warm *pacing.Warmup
	if r.Warmup != nil {
		warm = &pacing.Warmup{}
		if json.Unmarshal(r.Warmup, warm) != nil {
			warm = nil
		}
	}
	// Userinfo is refused when saved; a row stored before that shows it redacted.
	st.URL, st.Endpoint = redacted(st.URL), redacted(st.Endpoint)
	return Sender{ID: r.ID, Name: r.Name, Type: r.Type, Settings: st, CredentialsHint: r.SecretHint,
		RatePerSecond: r.RatePerSecond, MaxConnections: int(r.MaxConnections), AllowedFrom: allowed,
		Default: r.IsDefault, DomainLimits: limits, Warmup: warm, Idempotent: provider.IdempotentKind(r.Type),
		PausedReason: r.PausedReason, PausedAt: r.PausedAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// storable refuses text PostgreSQL cannot store or that is not UTF-8.
func storable(in any) error {
	raw, _ := json.Marshal(in)
	var walk func(ptr string, v any) error
	walk = func(ptr string, v any) error {
		switch x := v.(type) {
		case string:
			if !utf8.ValidString(x) || strings.ContainsRune(x, 0) {
				return apperr.Invalidf(ptr, "text must be UTF-8 without NUL")
			}
		case map[string]any:
			for k, e := range x {
				if err := walk(ptr+"/"+k, e); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range x {
				if err := walk(ptr+"/"+strconv.Itoa(i), e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	return walk("", v)
}

// pacingColumns are the stored forms of a sender's domain limits and warm-up.
func pacingColumns(limits []pacing.DomainLimit, w *pacing.Warmup) (json.RawMessage, json.RawMessage) {
	if limits == nil {
		limits = []pacing.DomainLimit{}
	}
	l, _ := json.Marshal(limits)
	if w == nil {
		return l, nil
	}
	raw, _ := json.Marshal(w)
	return l, raw
}

// Create adds a sender. Making it the default takes the flag from the previous one.
func (s *Service) Create(ctx context.Context, accountID int64, in Input) (Sender, error) {
	if err := storable(in); err != nil {
		return Sender{}, err
	}
	known := false
	for _, t := range Types {
		known = known || t == in.Type
	}
	if !known {
		return Sender{}, apperr.Invalidf("/type", "type is one of %s", strings.Join(Types, ", "))
	}
	var creds Credentials
	if in.Credentials != nil {
		creds = *in.Credentials
	}
	if err := validate(in.Type, in.Name, in.Settings, creds, in.RatePerSecond, in.MaxConnections, in.AllowedFrom, s.guard); err != nil {
		return Sender{}, err
	}
	if err := validatePacing(in.DomainLimits, in.Warmup); err != nil {
		return Sender{}, err
	}
	limits, warm := pacingColumns(in.DomainLimits, in.Warmup)
	if !creds.empty() && s.ring.Empty() {
		return Sender{}, apperr.New(apperr.Invalid, "%s", errNoKey.Error())
	}
	set, _ := json.Marshal(in.Settings)
	if in.AllowedFrom == nil {
		in.AllowedFrom = []string{}
	}
	var row store.Sender
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := quota.Reserve(ctx, q, accountID, quota.Senders); err != nil {
			return err
		}
		if in.Default {
			if err := q.SenderClearDefault(ctx, store.SenderClearDefaultParams{AccountID: accountID, ID: 0}); err != nil {
				return err
			}
		}
		var err error
		row, err = q.SenderCreate(ctx, store.SenderCreateParams{AccountID: accountID, Name: in.Name, Type: in.Type,
			Settings: set, RatePerSecond: in.RatePerSecond,
			MaxConnections: int32(in.MaxConnections), AllowedFrom: in.AllowedFrom, IsDefault: in.Default,
			DomainLimits: limits, Warmup: warm})
		if err != nil || creds.empty() {
			return err
		}
		// Sealed once the id exists: the ciphertext is bound to it.
		keyID, sealed, hnt, err := s.seal(accountID, row.ID, creds)
		if err != nil {
			return err
		}
		row, err = q.SenderSecretSet(ctx, store.SenderSecretSetParams{SecretKeyID: keyID, Secret: sealed,
			SecretHint: hnt, AccountID: accountID, ID: row.ID})
		return err
	})
	if err != nil {
		return Sender{}, postgres.Error(err, "sender")
	}
	return s.withWarmupDay(ctx, accountID, toSender(row))
}

// List returns up to limit senders after id afterID, in id order.
func (s *Service) List(ctx context.Context, accountID, afterID int64, limit int) ([]Sender, error) {
	rows, err := store.New(s.pool).SenderList(ctx, store.SenderListParams{AccountID: accountID, AfterID: afterID, MaxRows: int32(limit)})
	if err != nil {
		return nil, postgres.Error(err, "sender")
	}
	out := make([]Sender, 0, len(rows))
	for _, r := range rows {
		sn, err := s.withWarmupDay(ctx, accountID, toSender(r))
		if err != nil {
			return nil, err
		}
		out = append(out, sn)
	}
	return out, nil
}

// withWarmupDay adds today's (UTC) place in the sender's warm-up schedule.
func (s *Service) withWarmupDay(ctx context.Context, accountID int64, sn Sender) (Sender, error) {
	if sn.Warmup == nil {
		return sn, nil
	}
	now := time.Now()
	day := pacing.Day(now)
	limit, n, capped := sn.Warmup.CapOn(now)
	used, err := store.New(s.pool).SenderWarmupUsed(ctx, store.SenderWarmupUsedParams{AccountID: accountID,
		SenderID: sn.ID, Day: pgtype.Date{Time: day, Valid: true}})
	if err != nil {
		return sn, postgres.Error(err, "sender")
	}
	sn.WarmupToday = &WarmupDay{Day: day, DayNumber: n, Used: int(used)}
	if capped {
		sn.WarmupToday.Cap = &limit
	}
	return sn, nil
}

// Get returns one sender of the account.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Sender, error) {
	row, err := store.New(s.pool).SenderGet(ctx, store.SenderGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Sender{}, postgres.Error(err, "sender")
	}
	return s.withWarmupDay(ctx, accountID, toSender(row))
}

// Update applies a patch. New credentials replace the stored ones whole; settings
// given replace the stored settings whole.
func (s *Service) Update(ctx context.Context, accountID, id int64, p Patch) (Sender, error) {
	if err := storable(p); err != nil {
		return Sender{}, err
	}
	if p.ClearWarmup && p.Warmup != nil {
		return Sender{}, apperr.Invalidf("/clear_warmup", "clear_warmup removes the warm-up: not with warmup")
	}
	var row store.Sender
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		cur, err := q.SenderGetForUpdate(ctx, store.SenderGetForUpdateParams{AccountID: accountID, ID: id})
		if err != nil {
			return err
		}
		sn := toSender(cur)
		if p.Name != nil {
			sn.Name = *p.Name
		}
		if p.Settings != nil {
			sn.Settings = *p.Settings
		}
		if p.RatePerSecond != nil {
			sn.RatePerSecond = *p.RatePerSecond
		}
		if p.MaxConnections != nil {
			sn.MaxConnections = *p.MaxConnections
		}
		if p.AllowedFrom != nil {
			sn.AllowedFrom = *p.AllowedFrom
			if sn.AllowedFrom == nil {
				sn.AllowedFrom = []string{}
			}
		}
		if p.Default != nil {
			sn.Default = *p.Default
		}
		if p.DomainLimits != nil {
			sn.DomainLimits = *p.DomainLimits
		}
		if p.Warmup != nil || p.ClearWarmup {
			sn.Warmup = p.Warmup
		}
		keyID, sealed, hnt := cur.SecretKeyID, cur.Secret, cur.SecretHint
		var creds Credentials
		if p.Credentials != nil {
			creds = *p.Credentials
		} else if creds, err = s.open(cur); err != nil {
			return apperr.New(apperr.Conflict, "the stored credentials cannot be decrypted; send new credentials")
		}
		if err := validate(sn.Type, sn.Name, sn.Settings, creds, sn.RatePerSecond, sn.MaxConnections, sn.AllowedFrom, s.guard); err != nil {
			return err
		}
		if err := validatePacing(sn.DomainLimits, sn.Warmup); err != nil {
			return err
		}
		if p.Credentials == nil && cur.Secret != nil && destination(toSender(cur).Settings) != destination(sn.Settings) {
			// The stored secret would follow the sender to wherever it now points:
			// whoever may change the settings could aim it at their own server and
			// receive it. A new destination takes its credentials anew.
			return apperr.Invalidf("/credentials", "changing where this sender connects (url, endpoint, host, port, region or domain) requires its credentials again")
		}
		if p.Credentials != nil {
			if keyID, sealed, hnt, err = s.seal(accountID, id, creds); err != nil {
				return err
			}
		}
		if sn.Default && !cur.IsDefault {
			if err := q.SenderClearDefault(ctx, store.SenderClearDefaultParams{AccountID: accountID, ID: id}); err != nil {
				return err
			}
		}
		set, _ := json.Marshal(sn.Settings)
		limits, warm := pacingColumns(sn.DomainLimits, sn.Warmup)
		row, err = q.SenderUpdate(ctx, store.SenderUpdateParams{Name: sn.Name, Settings: set, SecretKeyID: keyID,
			Secret: sealed, SecretHint: hnt, RatePerSecond: sn.RatePerSecond, MaxConnections: int32(sn.MaxConnections),
			AllowedFrom: sn.AllowedFrom, IsDefault: sn.Default, SecretChanged: p.Credentials != nil,
			DomainLimits: limits, Warmup: warm,
			AccountID: accountID, ID: id})
		return err
	})
	if err != nil {
		return Sender{}, postgres.Error(err, "sender")
	}
	return s.withWarmupDay(ctx, accountID, toSender(row))
}

// Delete removes a sender no campaign names. Transactional messages that named it
// have a stream of their own: once none of them is left to send, the stream is
// retired with the deletion (its messages keep their history); while one is
// queued or in flight, the sender is in use.
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if _, err := q.SenderGet(ctx, store.SenderGetParams{AccountID: accountID, ID: id}); err != nil {
			return err
		}
		// Locked first, then judged by a statement of its own: it sees every message
		// added to the stream before the lock (SenderStreamLock).
		if _, err := q.SenderStreamLock(ctx, store.SenderStreamLockParams{AccountID: accountID, ID: &id}); err != nil {
			return err
		}
		if err := q.SenderRetireStream(ctx, store.SenderRetireStreamParams{AccountID: accountID, ID: &id}); err != nil {
			return err
		}
		inUse, err := q.SenderInUse(ctx, store.SenderInUseParams{AccountID: accountID, ID: &id})
		if err != nil {
			return err
		}
		if inUse {
			return apperr.New(apperr.Conflict, "campaigns name this sender, or messages that named it are still being sent; point the campaigns at another sender first, or retry when the messages are settled")
		}
		n, err := q.SenderDelete(ctx, store.SenderDeleteParams{AccountID: accountID, ID: id})
		if err != nil {
			return err
		}
		if n == 0 {
			return apperr.New(apperr.NotFound, "sender not found")
		}
		return nil
	})
	return postgres.Error(err, "sender")
}

// CheckKeys decrypts every stored credential (and DKIM key) and returns an error
// naming the senders (or keys) the ring cannot decrypt: serve refuses to start rather than fail at send time.
func CheckKeys(ctx context.Context, pool *pgxpool.Pool, ring *KeyRing) error {
	rows, err := store.New(pool).SenderSecretsAll(ctx)
	if err != nil {
		return err
	}
	var bad []string
	var first error
	for _, r := range rows {
		if _, _, err := openSecret(ring, r.SecretKeyID, r.Secret, r.AccountID, r.ID); err != nil {
			bad = append(bad, strconv.FormatInt(r.ID, 10))
			if first == nil {
				first = err
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("SENDONCE_SECRETS_KEY cannot decrypt the credentials of %d sender(s) (ids %s): %w; "+
			"add the key they were encrypted with to the ring", len(bad), strings.Join(bad, ", "), first)
	}
	// DKIM keys are sealed with the same ring.
	return dkim.CheckKeys(ctx, pool, ring)
}

// Rotate re-encrypts every stored credential under the ring's first key, bound to
// its sender (ciphertexts of the older, account-only form are re-sealed even under
// the first key), and returns how many changed. Run it after putting a new key
// first; the old key can leave the ring once it has run.
func Rotate(ctx context.Context, pool *pgxpool.Pool, ring *KeyRing) (int, error) {
	if ring.Empty() {
		return 0, errNoKey
	}
	q := store.New(pool)
	rows, err := q.SenderSecretsAll(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		pt, legacy, err := openSecret(ring, r.SecretKeyID, r.Secret, r.AccountID, r.ID)
		if err != nil {
			return n, fmt.Errorf("sender %d: %w", r.ID, err)
		}
		if r.SecretKeyID == ring.First() && !legacy {
			continue
		}
		keyID, sealed, err := ring.Seal(pt, aad(r.AccountID, r.ID))
		if err != nil {
			return n, err
		}
		c, err := q.SenderSecretReplace(ctx, store.SenderSecretReplaceParams{SecretKeyID: keyID, Secret: sealed,
			ID: r.ID, AccountID: r.AccountID, OldSecret: r.Secret})
		if err != nil {
			return n, err
		}
		n += int(c)
	}
	return n, nil
}

// CheckFrom refuses, as a 422 naming pointer, a From address that the sender a send
// goes through (senderID, else the account's default sender) does not allow by
// its allowed_from (AllowsFrom). found is false when there is no such sender: the
// environment's provider then sends, and it imposes no rule. Campaigns are held to
// it at approval, messages when accepted, a list's opt-in From when saved.
func CheckFrom(ctx context.Context, q *store.Queries, accountID int64, senderID *int64, from, pointer string) (found bool, err error) {
	rules, err := q.CampaignSenderRules(ctx, store.CampaignSenderRulesParams{AccountID: accountID, SenderID: senderID})
	switch {
	case postgres.NoRows(err):
		return false, nil
	case err != nil:
		return false, err
	case AllowsFrom(rules.AllowedFrom, from):
		return true, nil
	}
	return true, apperr.Invalidf(pointer, "sender %d does not allow sending from %s (allowed: %s)",
		rules.ID, from, strings.Join(rules.AllowedFrom, ", "))
}

// KindFor is the type of the sender a campaign or message naming senderID goes
// through: that sender's, else the account's default's; "" when none (the
// environment's provider). found is false when senderID names no sender of the
// account.
func (s *Service) KindFor(ctx context.Context, accountID int64, senderID *int64) (kind string, found bool, err error) {
	row, err := store.New(s.pool).SenderForSend(ctx, store.SenderForSendParams{AccountID: accountID, SenderID: senderID})
	if postgres.NoRows(err) {
		return "", senderID == nil, nil
	}
	if err != nil {
		return "", false, err
	}
	return row.Type, true, nil
}
