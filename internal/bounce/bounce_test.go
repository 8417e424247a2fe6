package bounce_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap"
	"github.com/emersion/go-imap/client"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/bounce"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/egress"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/webhook"
)

// env is one test's database, two accounts, a real IMAP server (go-imap's
// memory backend, user "username", password "password") and the service.
type env struct {
	t          *testing.T
	ctx        context.Context
	pool       *pgxpool.Pool
	a, b       int64
	verp       *bounce.VERP
	ring       *sender.KeyRing
	ringEntry  string
	hooks      *webhook.Service
	svc        *bounce.Service
	imap       *imapServer
	imapAddr   string
	campaignOf map[int64]int64
}

func setup(t *testing.T) *env { return setupWith(t, false) }

// setupWith is setup with a server that does not advertise IDLE when noIdle.
func setupWith(t *testing.T, noIdle bool) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), pool: dbtest.New(t), campaignOf: map[int64]int64{}}
	q := store.New(e.pool)
	a, err := q.AccountCreate(e.ctx, "a")
	require.NoError(t, err)
	b, err := q.AccountCreate(e.ctx, "b")
	require.NoError(t, err)
	e.a, e.b = a.ID, b.ID
	keys, err := token.NewRing([]string{"k1:bounce-test-secret-0123456789"})
	require.NoError(t, err)
	e.verp = bounce.NewVERP(keys)
	e.ringEntry = sender.NewKeyRingEntry("s1")
	ring, err := sender.ParseKeyRing([]string{e.ringEntry})
	require.NoError(t, err)
	e.ring = ring
	e.hooks = webhook.NewService(e.pool, webhook.Options{SoftBounceLimit: 3})
	e.svc = e.service(bounce.Options{})

	e.imap = startIMAP(t, noIdle)
	e.imapAddr = e.imap.addr
	host, port, _ := net.SplitHostPort(e.imapAddr)
	var p int
	fmt.Sscan(port, &p) //nolint:errcheck // a listener's port
	_, err = e.svc.Put(e.ctx, e.a, bounce.MailboxInput{Host: host, Port: p, Security: "none", Username: "username",
		Password: "password", Enabled: true})
	require.NoError(t, err)
	return e
}

// service is another reader of the same database (a replica), with o.
func (e *env) service(o bounce.Options) *bounce.Service {
	o.Guard = egress.Guard{AllowPrivate: true}
	return bounce.NewService(e.pool, e.ring, e.verp, e.hooks, o)
}

// run starts svc's reader as the process runner does; the returned stop (also
// run at cleanup, before the IMAP server closes) ends it and waits for it.
func (e *env) run(svc *bounce.Service) (stop func()) {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Run(ctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	e.t.Cleanup(stop)
	return stop
}

// send inserts a sent campaign row of account to email and returns its id.
func (e *env) send(account int64, email string) int64 {
	fx := testfactory.New(e.pool)
	campaignID := fx.Campaign(e.t, account, testfactory.Campaign{FromEmail: "f@example.com"})
	return fx.Send(e.t, account, campaignID, 7, testfactory.Send{Email: email, Status: "sent"})
}

// fixture reads a report as the MTA wrote it and puts the Return-Path of the
// send in place of the envelope sender it was made with (every spelling of it,
// in the letter case each has there: Exchange upper-cases the local part).
func (e *env) fixture(name, envelopeSender, returnPath string) []byte {
	raw, err := os.ReadFile("testdata/" + name)
	require.NoError(e.t, err)
	re := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(envelopeSender))
	require.True(e.t, re.Match(raw), "%s names %s", name, envelopeSender)
	return re.ReplaceAllFunc(raw, func(m []byte) []byte {
		if strings.ToUpper(string(m)) == string(m) {
			return []byte(strings.ToUpper(returnPath))
		}
		return []byte(returnPath)
	})
}

// deliver appends messages to the IMAP mailbox, as the bounce domain's MX would.
func (e *env) deliver(msgs ...[]byte) {
	c, err := client.Dial(e.imapAddr)
	require.NoError(e.t, err)
	defer c.Logout() //nolint:errcheck // the test's assertions say what matters
	require.NoError(e.t, c.Login("username", "password"))
	for _, m := range msgs {
		require.NoError(e.t, c.Append("INBOX", nil, time.Now(), imap.Literal(strings.NewReader(string(m)))))
	}
}

// inbox counts the messages left in the mailbox.
func (e *env) inbox() uint32 {
	c, err := client.Dial(e.imapAddr)
	require.NoError(e.t, err)
	defer c.Logout() //nolint:errcheck // idem
	require.NoError(e.t, c.Login("username", "password"))
	st, err := c.Select("INBOX", true)
	require.NoError(e.t, err)
	return st.Messages
}

func (e *env) suppressed(account int64, email string) string {
	var reason string
	_ = e.pool.QueryRow(e.ctx, `SELECT reason FROM suppressions WHERE account_id = $1 AND email_lower = lower($2)`,
		account, email).Scan(&reason)
	return reason
}

func (e *env) events(account int64, typ string) int {
	var n int
	require.NoError(e.t, e.pool.QueryRow(e.ctx, `SELECT count(*) FROM events WHERE account_id = $1 AND type = $2`,
		account, typ).Scan(&n))
	return n
}

func (e *env) feedback(id int64) string {
	var fb *string
	require.NoError(e.t, e.pool.QueryRow(e.ctx, `SELECT feedback FROM sends WHERE id = $1`, id).Scan(&fb))
	if fb == nil {
		return ""
	}
	return *fb
}

// The Postfix, Exim, Gmail and Exchange reports and the complaint in testdata,
// sent back to each send's Return-Path: hard bounces suppress and emit one
// event, the delayed one does not suppress, the complaint suppresses as one;
// an auto-reply, a forged token and another account's token apply nothing.
func (e *env) reports() (sends map[string]int64, msgs [][]byte) {
	sends = map[string]int64{}
	rp := func(name, email string) string {
		sends[name] = e.send(e.a, email)
		return e.verp.Address(e.a, sends[name], "bounce.example.test")
	}
	const placeholder = "bounces+zzverptokenzz@bounce.example.test"
	msgs = append(msgs,
		e.fixture("postfix-hard.eml", placeholder, rp("postfix", "p.hard@example.net")),
		e.fixture("exim-hard.eml", placeholder, rp("exim", "e.hard@example.net")),
		e.fixture("gmail-gsuite-hard.eml", "sironeko@example.net", rp("gmail", "g.hard@example.net")),
		e.fixture("exchange2007-hard.eml", "error@neko.example.com",
			rp("exchange", "x.hard@example.net")),
		e.fixture("postfix-delayed.eml", placeholder, rp("delayed", "soft@example.net")),
		e.fixture("arf-abuse.eml", "support@example.ed.jp", rp("arf", "complainer@example.net")),
	)
	// A vacation notice to a Return-Path (RFC 3834 §3.1.5 says to reply to it).
	msgs = append(msgs, []byte("From: someone@example.net\r\nTo: "+rp("vacation", "away@example.net")+
		"\r\nSubject: Out of office\r\nAuto-Submitted: auto-replied\r\nMessage-ID: <v1@example.net>\r\n\r\nI am away.\r\n"))
	// A hard bounce whose token another key signed: forged.
	otherKeys, err := token.NewRing([]string{"k1:another-secret-0123456789"})
	require.NoError(e.t, err)
	sends["forged"] = e.send(e.a, "forged@example.net")
	msgs = append(msgs, e.fixture("postfix-hard.eml", placeholder,
		bounce.NewVERP(otherKeys).Address(e.a, sends["forged"], "bounce.example.test")))
	// Account b's genuine token in account a's mailbox: never applied here or there.
	sends["foreign"] = e.send(e.b, "b.user@example.net")
	msgs = append(msgs, e.fixture("exim-hard.eml", placeholder, e.verp.Address(e.b, sends["foreign"], "bounce.example.test")))
	return sends, msgs
}

func (e *env) requireApplied(sends map[string]int64) {
	t := e.t
	for _, name := range []string{"postfix", "exim", "gmail", "exchange"} {
		require.Equal(t, "hard_bounce", e.feedback(sends[name]), name)
	}
	for email, reason := range map[string]string{"p.hard@example.net": "hard_bounce", "e.hard@example.net": "hard_bounce",
		"g.hard@example.net": "hard_bounce", "x.hard@example.net": "hard_bounce", "complainer@example.net": "complaint",
		"soft@example.net": "", "away@example.net": "", "forged@example.net": ""} {
		require.Equal(t, reason, e.suppressed(e.a, email), email)
	}
	require.Equal(t, "soft_bounce", e.feedback(sends["delayed"]))
	require.Equal(t, "complaint", e.feedback(sends["arf"]))
	require.Equal(t, 4, e.events(e.a, "subscriber.bounced"), "one event per hard bounce")
	require.Equal(t, 1, e.events(e.a, "subscriber.complained"))
	require.Empty(t, e.suppressed(e.b, "b.user@example.net"), "another account's token never applies")
	require.Empty(t, e.suppressed(e.a, "b.user@example.net"))
	require.Equal(t, "", e.feedback(sends["foreign"]))
	require.Equal(t, 0, e.events(e.b, "subscriber.bounced"))
	mb, err := e.svc.Get(e.ctx, e.a)
	require.NoError(t, err)
	require.Equal(t, map[string]int64{"hard_bounce": 4, "soft_bounce": 1, "complaint": 1, "auto_reply": 1, "forged": 1,
		"foreign": 1, "other": 1}, mb.Processed, "the memory backend's own first message is other")
}

func TestMailboxAppliesRealReportsOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	sends, msgs := e.reports()
	e.deliver(msgs...)
	res, err := e.svc.Poll(e.ctx, e.a)
	require.NoError(t, err)
	require.Equal(t, len(msgs)+1, res.Read)
	require.Zero(t, e.inbox(), "every message read is deleted")
	e.requireApplied(sends)

	// The same reports delivered again (an MTA's duplicate, a restore of the
	// mailbox): nothing more is applied or counted.
	e.deliver(msgs...)
	_, err = e.svc.Poll(e.ctx, e.a)
	require.NoError(t, err)
	require.Zero(t, e.inbox())
	e.requireApplied(sends)

	// Another MTA's report for a send that bounced already: read and counted,
	// but the send bounces once.
	e.deliver(e.fixture("exim-hard.eml", "bounces+zzverptokenzz@bounce.example.test",
		e.verp.Address(e.a, sends["postfix"], "bounce.example.test")))
	res, err = e.svc.Poll(e.ctx, e.a)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"hard_bounce": 1}, res.Outcomes)
	require.Equal(t, 4, e.events(e.a, "subscriber.bounced"))
}

func TestMailboxCrashBetweenApplyAndDelete(t *testing.T) {
	t.Parallel()
	e := setup(t)
	sends, msgs := e.reports()
	e.deliver(msgs...)
	// The reader dies after applying the fourth message, before deleting any.
	n := 0
	e.svc.SetAfterApply(func(uint32) error {
		if n++; n == 4 {
			return bounce.ErrStop
		}
		return nil
	})
	_, err := e.svc.Poll(e.ctx, e.a)
	require.ErrorIs(t, err, bounce.ErrStop)
	require.EqualValues(t, len(msgs)+1, e.inbox(), "nothing was deleted")
	e.svc.SetAfterApply(nil)
	_, err = e.svc.Poll(e.ctx, e.a)
	require.NoError(t, err)
	require.Zero(t, e.inbox())
	e.requireApplied(sends)
}

func TestMailboxPollDueRecordsStatus(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.svc.PollDue(e.ctx)
	mb, err := e.svc.Get(e.ctx, e.a)
	require.NoError(t, err)
	require.NotNil(t, mb.LastPollAt)
	require.Nil(t, mb.LastError)
	require.Equal(t, map[string]int64{"other": 1}, mb.Processed)
}

// The mailbox host is the tenant's choice: the default guard refuses loopback
// when it is saved, and the dialler refuses it when it is reached some other way.
func TestMailboxGoesThroughEgress(t *testing.T) {
	t.Parallel()
	e := setup(t)
	strict := bounce.NewService(e.pool, e.ring, e.verp, nil, bounce.Options{})
	_, err := strict.Put(e.ctx, e.b, bounce.MailboxInput{Host: "127.0.0.1", Port: 993, Username: "u", Password: "p", Enabled: true})
	require.ErrorContains(t, err, "host")
	_, err = strict.Poll(e.ctx, e.a)
	require.True(t, egress.Refused(err), "%v", err)
}

// rotate-secrets re-seals the mailbox password under the ring's new first key,
// after which the old key can leave the ring and the mailbox is still read.
func TestRotateResealsTheMailboxPassword(t *testing.T) {
	t.Parallel()
	e := setup(t)
	s2 := sender.NewKeyRingEntry("s2")
	newOnly, err := sender.ParseKeyRing([]string{s2})
	require.NoError(t, err)
	both, err := sender.ParseKeyRing([]string{s2, e.ringEntry})
	require.NoError(t, err)
	require.ErrorContains(t, bounce.CheckKeys(e.ctx, e.pool, newOnly), fmt.Sprintf("(ids %d)", e.a))
	require.NoError(t, bounce.CheckKeys(e.ctx, e.pool, both))

	n, err := bounce.Rotate(e.ctx, e.pool, both)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = bounce.Rotate(e.ctx, e.pool, both)
	require.NoError(t, err)
	require.Zero(t, n, "already under the first key")

	require.NoError(t, bounce.CheckKeys(e.ctx, e.pool, newOnly), "the old key can go")
	svc := bounce.NewService(e.pool, newOnly, e.verp, e.hooks, bounce.Options{Guard: egress.Guard{AllowPrivate: true}})
	res, err := svc.Poll(e.ctx, e.a)
	require.NoError(t, err, "the mailbox is read with the new key alone")
	require.Equal(t, 1, res.Read)
}
