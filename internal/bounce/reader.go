package bounce

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/emersion/go-imap"
	"github.com/emersion/go-imap/client"

	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
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

// Run polls the due mailboxes until ctx ends: every enabled mailbox not polled
// within Interval, the longest waiting first, one at a time.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.opts.Interval / 4)
	defer t.Stop()
	for {
		s.PollDue(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// PollDue polls the mailboxes due now and records each poll's outcome.
func (s *Service) PollDue(ctx context.Context) {
	now := s.opts.Now()
	due, err := store.New(s.pool).BounceMailboxDue(ctx, store.BounceMailboxDueParams{
		Now: &now, IntervalSeconds: s.opts.Interval.Seconds(), MaxRows: 20,
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
		_, err := s.poll(ctx, mb)
		var last *string
		if err != nil {
			msg := err.Error()
			last = &msg
			s.opts.Logger.Warn("bounce mailbox poll", "account_id", mb.AccountID, "err", err)
		}
		at := s.opts.Now()
		if err := store.New(s.pool).BounceMailboxPolled(context.WithoutCancel(ctx), store.BounceMailboxPolledParams{
			Now: &at, LastError: last, AccountID: mb.AccountID,
		}); err != nil {
			s.opts.Logger.Error("bounce mailbox polled", "account_id", mb.AccountID, "err", err)
		}
	}
}

// Poll reads the account's mailbox once, now (the CLI's and the tests' way in).
func (s *Service) Poll(ctx context.Context, accountID int64) (PollResult, error) {
	mb, err := store.New(s.pool).BounceMailboxGet(ctx, accountID)
	if err != nil {
		return PollResult{}, postgres.Error(err, "bounce mailbox")
	}
	return s.poll(ctx, mb)
}

// poll connects (through the egress guard: the tenant chose the host), reads
// every message not marked deleted, applies each, then marks the batch deleted
// and expunges it. A crash between applying and deleting leaves the messages
// to be read again, which applies nothing twice: each bounce or complaint is
// gated by its event id (webhook.Apply) and each message's count by its hash
// (bounce_messages).
func (s *Service) poll(ctx context.Context, mb store.BounceMailbox) (PollResult, error) {
	res := PollResult{Outcomes: map[string]int{}}
	password, err := s.ring.Open(mb.SecretKeyID, mb.Secret, aad(mb.AccountID))
	if err != nil {
		return res, fmt.Errorf("the stored password cannot be read: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	c, err := s.dial(ctx, mb)
	if err != nil {
		return res, err
	}
	defer c.Logout() //nolint:errcheck // the poll's own error, if any, is the one to report
	if err := c.Login(mb.Username, string(password)); err != nil {
		return res, fmt.Errorf("imap login: %w", err)
	}
	if _, err := c.Select(mb.Folder, false); err != nil {
		return res, fmt.Errorf("imap select %q: %w", mb.Folder, err)
	}
	criteria := imap.NewSearchCriteria()
	criteria.WithoutFlags = []string{imap.DeletedFlag}
	uids, err := c.UidSearch(criteria)
	if err != nil {
		return res, fmt.Errorf("imap search: %w", err)
	}
	for len(uids) > 0 && ctx.Err() == nil {
		n := min(batch, len(uids))
		if err := s.readBatch(ctx, c, mb.AccountID, uids[:n], &res); err != nil {
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
		if s.afterApply != nil {
			if err := s.afterApply(m.Uid); err != nil {
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
	// The poll's deadline bounds every read and write.
	if d, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(d)
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
	if mb.Security == "starttls" {
		if err := c.StartTLS(conf); err != nil {
			raw.Close() //nolint:errcheck // idem
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
