package bounce

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/backoff"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/webhook"
)

// Options configure a Service.
type Options struct {
	// Interval is how long a mailbox rests between polls; default one minute.
	Interval time.Duration
	// Timeout bounds one poll of one mailbox (connect, read, delete) and each
	// command of a connection kept open; default two minutes.
	Timeout time.Duration
	// IdleRestart is how long one IDLE lasts before the reader ends it, reads the
	// mailbox and issues the next: RFC 2177 asks for one at least every 29
	// minutes (a server may log out a client idle longer); default 25 minutes.
	IdleRestart time.Duration
	// Reconnect spaces a watcher's attempts to connect again after its
	// connection failed; default 2 s doubling up to 5 minutes, with jitter.
	Reconnect backoff.Exponential
	// Guard says where mailbox connections may go: a tenant aims them.
	Guard egress.Guard
	// Logger receives the poll failures; nil discards them.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Service keeps the accounts' bounce mailboxes and reads them.
type Service struct {
	pool  *pgxpool.Pool
	ring  *sender.KeyRing
	verp  *VERP
	hooks *webhook.Service
	opts  Options
	// afterApply, when set (tests), runs after a message is applied and before
	// it is deleted; an error ends the poll there, as a crash would.
	afterApply atomic.Pointer[func(uid uint32) error]
	signals    testSignals
}

// NewService returns a Service: ring seals the mailbox passwords (as sender
// credentials), verp reads the Return-Paths, hooks applies what they say.
func NewService(pool *pgxpool.Pool, ring *sender.KeyRing, verp *VERP, hooks *webhook.Service, o Options) *Service {
	if o.Interval <= 0 {
		o.Interval = time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.IdleRestart <= 0 {
		o.IdleRestart = 25 * time.Minute
	}
	if o.Reconnect.Base <= 0 {
		o.Reconnect = backoff.Exponential{Base: 2 * time.Second, Max: 5 * time.Minute}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if ring == nil {
		ring = &sender.KeyRing{}
	}
	return &Service{pool: pool, ring: ring, verp: verp, hooks: hooks, opts: o}
}

// MailboxInput is an account's bounce mailbox as set: every field, the password
// included (write-only, stored sealed, never returned).
type MailboxInput struct {
	Host     string
	Port     int
	Security string // tls (default), starttls or none
	Username string
	Password string
	Folder   string // default INBOX
	Enabled  bool
}

// Mailbox is an account's bounce mailbox as shown, with its status.
type Mailbox struct {
	Host, Security, Username, Folder string
	Port                             int
	Enabled                          bool
	LastPollAt                       *time.Time
	LastError                        *string
	// Mode is how the mailbox was last read: ModeIdle, ModePoll, or "" before
	// its first reading.
	Mode string
	// LastConnectedAt is when a reader last logged in to the mailbox.
	LastConnectedAt *time.Time
	// Processed counts the messages read, by what they were taken for
	// (hard_bounce, soft_bounce, complaint, auto_reply, forged, foreign,
	// unmatched, other), over the last 30 days.
	Processed map[string]int64
}

// aad binds a sealed password to its account.
func aad(accountID int64) []byte {
	return []byte("sendonce.bounce-mailbox.v1:" + strconv.FormatInt(accountID, 10))
}

// Put sets the account's bounce mailbox; bad input is a 422 naming the field.
func (s *Service) Put(ctx context.Context, accountID int64, in MailboxInput) (Mailbox, error) {
	if in.Security == "" {
		in.Security = "tls"
	}
	if in.Folder == "" {
		in.Folder = "INBOX"
	}
	if err := s.validate(in); err != nil {
		return Mailbox{}, err
	}
	keyID, sealed, err := s.ring.Seal([]byte(in.Password), aad(accountID))
	if err != nil {
		return Mailbox{}, apperr.Invalidf("/password", "the password cannot be stored: %s", err)
	}
	// In a transaction, so the request's audit entry is written with it.
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		_, err := store.New(tx).BounceMailboxUpsert(ctx, store.BounceMailboxUpsertParams{
			AccountID: accountID, Host: strings.ToLower(in.Host), Port: int32(in.Port), Security: in.Security,
			Username: in.Username, SecretKeyID: keyID, Secret: sealed, Folder: in.Folder, Enabled: in.Enabled,
		})
		return err
	})
	if err != nil {
		return Mailbox{}, postgres.Error(err, "bounce mailbox")
	}
	return s.Get(ctx, accountID)
}

func (s *Service) validate(in MailboxInput) error {
	switch {
	case in.Host == "" || len(in.Host) > 253:
		return apperr.Invalidf("/host", "host is 1 to 253 characters")
	case in.Port < 1 || in.Port > 65535:
		return apperr.Invalidf("/port", "port is between 1 and 65535")
	case in.Security != "tls" && in.Security != "starttls" && in.Security != "none":
		return apperr.Invalidf("/security", "security is tls, starttls or none")
	case in.Username == "" || len(in.Username) > 500:
		return apperr.Invalidf("/username", "username is 1 to 500 characters")
	case in.Password == "" || len(in.Password) > 500:
		return apperr.Invalidf("/password", "password is 1 to 500 characters")
	case len(in.Folder) > 200 || strings.ContainsAny(in.Folder, "\r\n\x00"):
		return apperr.Invalidf("/folder", "folder is at most 200 characters, on one line")
	}
	// The dialler refuses internal addresses on every connection; what the text
	// alone shows (a literal internal address, localhost) is refused here.
	if err := s.opts.Guard.CheckHost(in.Host); err != nil {
		return apperr.Invalidf("/host", "host %s", err)
	}
	return nil
}

// Get returns the account's bounce mailbox and its status; none is not_found.
func (s *Service) Get(ctx context.Context, accountID int64) (Mailbox, error) {
	q := store.New(s.pool)
	row, err := q.BounceMailboxGet(ctx, accountID)
	if err != nil {
		return Mailbox{}, postgres.Error(err, "bounce mailbox")
	}
	counts, err := q.BounceMessageCounts(ctx, accountID)
	if err != nil {
		return Mailbox{}, postgres.Error(err, "bounce mailbox")
	}
	m := Mailbox{Host: row.Host, Port: int(row.Port), Security: row.Security, Username: row.Username,
		Folder: row.Folder, Enabled: row.Enabled, LastPollAt: row.LastPollAt, LastError: row.LastError,
		LastConnectedAt: row.LastConnectedAt, Processed: map[string]int64{}}
	if row.ReaderMode != nil {
		m.Mode = *row.ReaderMode
	}
	for _, c := range counts {
		m.Processed[c.Outcome] = c.N
	}
	return m, nil
}

// Delete removes the account's bounce mailbox; none is not_found.
func (s *Service) Delete(ctx context.Context, accountID int64) error {
	// Nothing deleted is a 404 from inside the transaction, so it rolls back and
	// the request's audit entry, which commits with it, is not written.
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		n, err := store.New(tx).BounceMailboxDelete(ctx, accountID)
		if err != nil {
			return postgres.Error(err, "bounce mailbox")
		}
		if n == 0 {
			return apperr.New(apperr.NotFound, "bounce mailbox not found")
		}
		return nil
	})
	return err
}

// CheckKeys returns an error naming the accounts whose mailbox password ring
// cannot decrypt (the start-up check, with the senders' and DKIM keys').
func CheckKeys(ctx context.Context, pool *pgxpool.Pool, ring *sender.KeyRing) error {
	rows, err := store.New(pool).BounceMailboxSecretsAll(ctx)
	if err != nil {
		return err
	}
	var bad []string
	var first error
	for _, r := range rows {
		if _, err := ring.Open(r.SecretKeyID, r.Secret, aad(r.AccountID)); err != nil {
			bad = append(bad, strconv.FormatInt(r.AccountID, 10))
			if first == nil {
				first = err
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("SENDONCE_SECRETS_KEY cannot decrypt the bounce mailbox password of %d account(s) (ids %s): %w; "+
			"add the key they were encrypted with to the ring", len(bad), strings.Join(bad, ", "), first)
	}
	return nil
}

// Rotate re-encrypts every stored mailbox password under ring's first key and
// returns how many changed (`sendonce senders rotate-secrets` runs it with the
// senders' credentials and the DKIM keys).
func Rotate(ctx context.Context, pool *pgxpool.Pool, ring *sender.KeyRing) (int, error) {
	q := store.New(pool)
	rows, err := q.BounceMailboxSecretsAll(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		if r.SecretKeyID == ring.First() {
			continue
		}
		pt, err := ring.Open(r.SecretKeyID, r.Secret, aad(r.AccountID))
		if err != nil {
			return n, fmt.Errorf("bounce mailbox of account %d: %w", r.AccountID, err)
		}
		keyID, sealed, err := ring.Seal(pt, aad(r.AccountID))
		if err != nil {
			return n, err
		}
		c, err := q.BounceMailboxSecretReplace(ctx, store.BounceMailboxSecretReplaceParams{SecretKeyID: keyID,
			Secret: sealed, AccountID: r.AccountID, OldSecret: r.Secret})
		if err != nil {
			return n, err
		}
		n += int(c)
	}
	return n, nil
}
