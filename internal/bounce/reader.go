package bounce

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"time"

	"github.com/emersion/go-imap"
	"github.com/emersion/go-imap/client"

	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testsignal"
	"github.com/sendonce/sendonce/internal/webhook"
)

// Source is the webhook_events source of what the mailbox applies: its gate is
// kept apart from every provider's.
const Source = "mailbox"

// batch is how many messages one FETCH reads; each is deleted once its batch is
// applied.
const batch = 50

// maxMessage bounds one mailbox message (a DSN returning a large message has it
// whole); a larger one is read no further than this.
const maxMessage = 4 << 20

// PollResult says what one poll did.
type PollResult struct {
	// Read counts the messages read; Outcomes counts them by what they were taken for.
	Read     int
	Outcomes map[string]int
}

// The reader's modes, as bounce_mailboxes.reader_mode records them.
const (
	// ModeIdle: a connection is held open and the server tells of each new
	// message as it arrives (RFC 2177 IDLE).
	ModeIdle = "idle"
	// ModePoll: the server does not offer IDLE; the mailbox is read every Interval.
	ModePoll = "poll"
)

// Run reads the mailboxes until ctx ends. Every enabled mailbox not read within
// Interval is read, the longest waiting first, one at a time; when its server
// offers IDLE the connection is kept and watched (watch) until the mailbox
// changes or the connection fails for good, so new reports are applied as they
// arrive rather than at the next poll. Run returns once every watcher has let go.
func (s *Service) Run(ctx context.Context) {
	w := &watchers{m: map[int64]*watcher{}}
	defer w.stopAll()
	t := time.NewTicker(s.opts.Interval / 4)
	defer t.Stop()
	for {
		s.release(ctx, w)
		s.pollDue(ctx, w)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// PollDue reads the mailboxes due now once each and records each reading's
// outcome; it keeps no connection (Run does).
func (s *Service) PollDue(ctx context.Context) { s.pollDue(ctx, nil) }

func (s *Service) pollDue(ctx context.Context, w *watchers) {
	now := s.opts.Now()
	due, err := store.New(s.pool).BounceMailboxDue(ctx, store.BounceMailboxDueParams{
		Watching: w.ids(), Now: &now, IntervalSeconds: s.opts.Interval.Seconds(), MaxRows: 20,
	})
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Error("bounce mailboxes due", "err", err)
		}
		return
	}
	// The record of messages read is kept 30 days: far beyond any crash-and-reread.
	if _, err := store.New(s.pool).BounceMessagePrune(ctx, &now); err != nil && ctx.Err() == nil {
		s.opts.Logger.Error("bounce messages prune", "err", err)
	}
	for _, mb := range due {
		if ctx.Err() != nil {
			return
		}
		if w == nil {
			pctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
			res, mode, err := s.poll(pctx, mb)
			cancel()
			s.record(ctx, mb.AccountID, mode, res, err)
			continue
		}
		// The connection lives as long as its watcher, if it gets one: its
		// context is the watcher's, not the poll's.
		wctx, cancel := context.WithCancel(ctx)
		sess, res, err := s.open(wctx, mb)
		if err == nil && sess.idle {
			s.record(ctx, mb.AccountID, ModeIdle, res, nil)
			w.start(cancel, mb.AccountID, mb.UpdatedAt, func() { s.watch(wctx, mb, sess) })
			continue
		}
		mode := sess.mode()
		if sess != nil {
			sess.close()
		}
		cancel()
		s.record(ctx, mb.AccountID, mode, res, err)
	}
}

// record writes a reading's outcome on the mailbox's row, and signals it (tests).
func (s *Service) record(ctx context.Context, accountID int64, mode string, res PollResult, err error) {
	var last, m *string
	if err != nil {
		msg := err.Error()
		last = &msg
		s.opts.Logger.Warn("bounce mailbox read", "account_id", accountID, "err", err)
	}
	if mode != "" {
		m = &mode
	}
	at := s.opts.Now()
	if err := store.New(s.pool).BounceMailboxPolled(context.WithoutCancel(ctx), store.BounceMailboxPolledParams{
		Now: &at, LastError: last, Mode: m, AccountID: accountID,
	}); err != nil {
		s.opts.Logger.Error("bounce mailbox polled", "account_id", accountID, "err", err)
	}
	s.signals.read.Signal(Reading{AccountID: accountID, Mode: mode, Read: res.Read, Err: err})
}

// Reading is one reading of a mailbox as its tests see it.
type Reading struct {
	AccountID int64
	Mode      string
	Read      int
	Err       error
}

// testSignals are the moments of the reader its tests wait on instead of
// sleeping (internal/testsignal); production never initialises them.
type testSignals struct {
	// read: a reading of a mailbox ended and was recorded.
	read testsignal.Signal[Reading]
	// idling: a watcher issued IDLE on its mailbox (the account id).
	idling testsignal.Signal[int64]
}

// Poll reads the account's mailbox once, now (the CLI's and the tests' way in).
func (s *Service) Poll(ctx context.Context, accountID int64) (PollResult, error) {
	mb, err := store.New(s.pool).BounceMailboxGet(ctx, accountID)
	if err != nil {
		return PollResult{}, postgres.Error(err, "bounce mailbox")
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	res, _, err := s.poll(ctx, mb)
	return res, err
}

// poll connects, reads every message and logs out; mode is the mode the
// mailbox is in when read this way ("" when the connection failed).
func (s *Service) poll(ctx context.Context, mb store.BounceMailbox) (PollResult, string, error) {
	sess, res, err := s.open(ctx, mb)
	if sess == nil {
		return res, "", err
	}
	sess.close()
	return res, ModePoll, err
}

// open connects (through the egress guard: the tenant chose the host), logs in,
// selects the folder and reads every message not marked deleted (read). The
// session is returned whenever the connection was made, for the caller to close
// or to keep; ctx bounds its life: when ctx ends the connection is cut.
func (s *Service) open(ctx context.Context, mb store.BounceMailbox) (*session, PollResult, error) {
	res := PollResult{Outcomes: map[string]int{}}
	password, err := s.ring.Open(mb.SecretKeyID, mb.Secret, aad(mb.AccountID))
	if err != nil {
		return nil, res, fmt.Errorf("the stored password cannot be read: %w", err)
	}
	c, err := s.dial(ctx, mb)
	if err != nil {
		return nil, res, err
	}
	sess := newSession(ctx, c)
	if err := c.Login(mb.Username, string(password)); err != nil {
		sess.close()
		return nil, res, fmt.Errorf("imap login: %w", err)
	}
	if _, err := c.Select(mb.Folder, false); err != nil {
		sess.close()
		return nil, res, fmt.Errorf("imap select %q: %w", mb.Folder, err)
	}
	if sess.idle, err = c.Support("IDLE"); err != nil {
		sess.close()
		return nil, res, fmt.Errorf("imap capability: %w", err)
	}
	mode := sess.mode()
	at := s.opts.Now()
	if err := store.New(s.pool).BounceMailboxConnected(context.WithoutCancel(ctx), store.BounceMailboxConnectedParams{
		Now: &at, Mode: &mode, AccountID: mb.AccountID,
	}); err != nil {
		s.opts.Logger.Error("bounce mailbox connected", "account_id", mb.AccountID, "err", err)
	}
	res, err = s.read(ctx, sess.c, mb.AccountID)
	return sess, res, err
}

// read reads every message of the selected folder not marked deleted, applies
// each, then marks each batch deleted and expunges it. A crash between applying
// and deleting leaves the messages to be read again, which applies nothing
// twice: each bounce or complaint is gated by its event id (webhook.Apply) and
// each message's count by its hash (bounce_messages). Two readers of one
// mailbox (two replicas each watching it) are the same case: whichever applies
// a message second changes nothing.
func (s *Service) read(ctx context.Context, c *client.Client, accountID int64) (PollResult, error) {
	res := PollResult{Outcomes: map[string]int{}}
	criteria := imap.NewSearchCriteria()
	criteria.WithoutFlags = []string{imap.DeletedFlag}
	uids, err := c.UidSearch(criteria)
	if err != nil {
		return res, fmt.Errorf("imap search: %w", err)
	}
	for len(uids) > 0 && ctx.Err() == nil {
		n := min(batch, len(uids))
		if err := s.readBatch(ctx, c, accountID, uids[:n], &res); err != nil {
			return res, err
		}
		uids = uids[n:]
	}
	return res, ctx.Err()
}

// readBatch fetches, applies and deletes one batch of messages.
func (s *Service) readBatch(ctx context.Context, c *client.Client, accountID int64, uids []uint32, res *PollResult) error {
	set := new(imap.SeqSet)
	set.AddNum(uids...)
	section := &imap.BodySectionName{Peek: true}
	ch := make(chan *imap.Message, len(uids))
	if err := c.UidFetch(set, []imap.FetchItem{imap.FetchUid, section.FetchItem()}, ch); err != nil {
		return fmt.Errorf("imap fetch: %w", err)
	}
	done := new(imap.SeqSet)
	for m := range ch {
		body := m.GetBody(section)
		if body == nil {
			continue
		}
		raw, err := io.ReadAll(io.LimitReader(body, maxMessage))
		if err != nil {
			return fmt.Errorf("imap read: %w", err)
		}
		outcome, err := s.Handle(ctx, accountID, raw)
		if err != nil {
			return err
		}
		res.Read++
		res.Outcomes[outcome]++
		if after := s.afterApply.Load(); after != nil {
			if err := (*after)(m.Uid); err != nil {
				return err
			}
		}
		done.AddNum(m.Uid)
	}
	if done.Empty() {
		return nil
	}
	if err := c.UidStore(done, imap.FormatFlagsOp(imap.AddFlags, true), []any{imap.DeletedFlag}, nil); err != nil {
		return fmt.Errorf("imap store: %w", err)
	}
	if err := c.Expunge(nil); err != nil {
		return fmt.Errorf("imap expunge: %w", err)
	}
	return nil
}

// dial connects to the mailbox through the egress guard, with TLS from the
// first byte (tls), upgraded (starttls) or none.
func (s *Service) dial(ctx context.Context, mb store.BounceMailbox) (*client.Client, error) {
	addr := net.JoinHostPort(mb.Host, strconv.Itoa(int(mb.Port)))
	raw, err := s.opts.Guard.Dialer(30*time.Second).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("imap connect: %w", err)
	}
	// The handshakes are bounded here; then each command by the client's Timeout,
	// and the whole connection by ctx (newSession).
	if d, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(d)
	} else {
		_ = raw.SetDeadline(time.Now().Add(s.opts.Timeout))
	}
	conf := &tls.Config{ServerName: mb.Host, MinVersion: tls.VersionTLS12}
	conn := raw
	if mb.Security == "tls" {
		tc := tls.Client(raw, conf)
		if err := tc.HandshakeContext(ctx); err != nil {
			raw.Close() //nolint:errcheck // the handshake error is the one to report
			return nil, fmt.Errorf("imap tls: %w", err)
		}
		conn = tc
	}
	c, err := client.New(conn)
	if err != nil {
		raw.Close() //nolint:errcheck // idem
		return nil, fmt.Errorf("imap greeting: %w", err)
	}
	c.ErrorLog = log.New(io.Discard, "", 0) // a cut connection is reported by the command it cut
	c.Timeout = s.opts.Timeout
	if mb.Security == "starttls" {
		if err := c.StartTLS(conf); err != nil {
			c.Terminate() //nolint:errcheck // idem
			return nil, fmt.Errorf("imap starttls: %w", err)
		}
	}
	return c, nil
}

// Handle takes one mailbox message of accountID's mailbox for what it is and
// applies it, and returns what it was taken for. Only a token that verifies
// and names a send of this same account applies anything: another account's
// token (foreign), a token that does not verify (forged) and a report without
// one (unmatched) are counted and change nothing.
func (s *Service) Handle(ctx context.Context, accountID int64, raw []byte) (string, error) {
	rep, err := Parse(raw)
	outcome, sendID := string(rep.Kind), int64(0)
	if err != nil {
		outcome = string(KindOther)
	}
	if rep.Kind == KindHardBounce || rep.Kind == KindSoftBounce || rep.Kind == KindComplaint {
		outcome, sendID, err = s.apply(ctx, accountID, rep)
		if err != nil {
			return "", err
		}
	}
	var sid *int64
	if sendID != 0 {
		sid = &sendID
	}
	if _, err := store.New(s.pool).BounceMessageRecord(ctx, store.BounceMessageRecordParams{
		AccountID: accountID, MessageKey: rep.Key, Outcome: outcome, SendID: sid,
	}); err != nil {
		return "", fmt.Errorf("record bounce message: %w", err)
	}
	return outcome, nil
}

// kindOf is the webhook kind of each report kind that applies.
var kindOf = map[Kind]webhook.Kind{
	KindHardBounce: webhook.KindHardBounce,
	KindSoftBounce: webhook.KindSoftBounce,
	KindComplaint:  webhook.KindComplaint,
}

// apply ties a report to its send by the first token that verifies and applies
// it as the send's event. A send bounces hard once and is complained about
// once, whatever number of reports say so (the event id is the send's); each
// soft bounce report is its own event, counted per send by the soft-bounce rule.
func (s *Service) apply(ctx context.Context, accountID int64, rep Report) (string, int64, error) {
	forged := false
	for _, a := range rep.Addresses {
		acc, sendID, ours, ok := s.verp.Open(a)
		forged = forged || (ours && !ok)
		if !ok {
			continue
		}
		if acc != accountID {
			return "foreign", 0, nil
		}
		send, err := store.New(s.pool).BounceSendGet(ctx, store.BounceSendGetParams{AccountID: accountID, ID: sendID})
		if postgres.NoRows(err) {
			return "unmatched", 0, nil
		}
		if err != nil {
			return "", 0, fmt.Errorf("bounce send: %w", err)
		}
		id := fmt.Sprintf("send:%d:%s", send.ID, rep.Kind)
		if rep.Kind == KindSoftBounce {
			id += ":" + rep.Key
		}
		_, err = s.hooks.Apply(ctx, accountID, Source, Source, []webhook.Event{{
			ID: id, Type: "mailbox." + string(rep.Kind) + ":" + rep.Status, Kind: kindOf[rep.Kind],
			Email: send.Email, JobID: send.JobID,
		}})
		if err != nil {
			return "", 0, err
		}
		return string(rep.Kind), send.ID, nil
	}
	if forged {
		return "forged", 0, nil
	}
	return "unmatched", 0, nil
}

// errStop is what a test's afterApply returns to end a poll as a crash would.
var errStop = errors.New("bounce: poll stopped")
