package bounce_test

import (
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/backoff"
	"github.com/sendonce/sendonce/internal/bounce"
	"github.com/sendonce/sendonce/internal/testsignal"
)

// readsUntil waits for account's readings until n messages have been read in
// all, each in mode and without an error.
func (e *env) readsUntil(read *testsignal.Signal[bounce.Reading], n int, mode string) {
	e.t.Helper()
	got := 0
	read.WaitFor(e.t, func(r bounce.Reading) bool {
		if r.AccountID != e.a {
			return false
		}
		require.NoError(e.t, r.Err)
		require.Equal(e.t, mode, r.Mode)
		got += r.Read
		return got >= n
	})
}

// Where the server offers IDLE, a report delivered while the reader waits is
// read when the server tells of it: with an Interval of an hour, no poll could
// have read it within the test.
func TestMailboxIdleReadsReportsAsTheyArrive(t *testing.T) {
	t.Parallel()
	e := setup(t)
	svc := e.service(bounce.Options{Interval: time.Hour})
	read, idling := svc.InitSignals()
	e.run(svc)
	e.readsUntil(read, 1, bounce.ModeIdle) // the memory backend's own first message
	idling.WaitFor(t, func(id int64) bool { return id == e.a })

	sends, msgs := e.reports()
	e.deliver(msgs...)
	e.readsUntil(read, len(msgs), bounce.ModeIdle)
	require.Zero(t, e.inbox())
	e.requireApplied(sends)
	mb, err := e.svc.Get(e.ctx, e.a)
	require.NoError(t, err)
	require.Equal(t, bounce.ModeIdle, mb.Mode)
	require.NotNil(t, mb.LastConnectedAt)
	require.Nil(t, mb.LastError)
}

// A server that does not advertise IDLE is polled every Interval.
func TestMailboxWithoutIdleIsPolled(t *testing.T) {
	t.Parallel()
	e := setupWith(t, true)
	svc := e.service(bounce.Options{Interval: 20 * time.Millisecond})
	read, _ := svc.InitSignals()
	e.run(svc)
	e.readsUntil(read, 1, bounce.ModePoll)

	sends, msgs := e.reports()
	e.deliver(msgs...)
	e.readsUntil(read, len(msgs), bounce.ModePoll)
	require.Zero(t, e.inbox())
	e.requireApplied(sends)
	mb, err := e.svc.Get(e.ctx, e.a)
	require.NoError(t, err)
	require.Equal(t, bounce.ModePoll, mb.Mode)
}

// IDLE is ended and issued again every IdleRestart (RFC 2177: at least every 29
// minutes), with a reading between, though no message arrived.
func TestMailboxIdleIsReissued(t *testing.T) {
	t.Parallel()
	e := setup(t)
	svc := e.service(bounce.Options{Interval: time.Hour, IdleRestart: 20 * time.Millisecond})
	read, idling := svc.InitSignals()
	e.run(svc)
	for range 3 {
		idling.WaitFor(t, func(id int64) bool { return id == e.a })
	}
	e.readsUntil(read, 1, bounce.ModeIdle)
	sends, msgs := e.reports()
	e.deliver(msgs...)
	e.readsUntil(read, len(msgs), bounce.ModeIdle)
	e.requireApplied(sends)
}

// A connection that drops is made again (with backoff) and the reader IDLEs
// on the new one: what arrives after is read as promptly.
func TestMailboxIdleReconnectsAfterADrop(t *testing.T) {
	t.Parallel()
	e := setup(t)
	svc := e.service(bounce.Options{Interval: time.Hour,
		Reconnect: backoff.Exponential{Base: time.Millisecond, Max: 10 * time.Millisecond}})
	read, idling := svc.InitSignals()
	e.run(svc)
	idling.WaitFor(t, func(id int64) bool { return id == e.a })
	first, err := e.svc.Get(e.ctx, e.a)
	require.NoError(t, err)

	e.imap.drop()
	r := read.WaitFor(t, func(r bounce.Reading) bool { return r.AccountID == e.a && r.Err != nil })
	require.Empty(t, r.Mode, "the drop is recorded as the connection's error")
	read.WaitFor(t, func(r bounce.Reading) bool { return r.AccountID == e.a && r.Err == nil })
	idling.WaitFor(t, func(id int64) bool { return id == e.a })

	sends, msgs := e.reports()
	e.deliver(msgs...)
	e.readsUntil(read, len(msgs), bounce.ModeIdle)
	e.requireApplied(sends)
	mb, err := e.svc.Get(e.ctx, e.a)
	require.NoError(t, err)
	require.Nil(t, mb.LastError, "a good reading clears the error")
	require.True(t, mb.LastConnectedAt.After(*first.LastConnectedAt), "connected again")
}

// Two replicas each watch the mailbox and read the same messages: one applies
// its first message and stalls before deleting it while the other reads them
// all; each report still applies once and counts once.
func TestMailboxTwoReadersApplyEachReportOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// A short Interval: whichever reads first, the other finds the mailbox due
	// soon after and watches it too.
	svcA := e.service(bounce.Options{Interval: 20 * time.Millisecond})
	svcB := e.service(bounce.Options{Interval: 20 * time.Millisecond})
	readA, idlingA := svcA.InitSignals()
	readB, idlingB := svcB.InitSignals()
	stopA, stopB := e.run(svcA), e.run(svcB)
	idlingA.WaitFor(t, func(id int64) bool { return id == e.a })
	idlingB.WaitFor(t, func(id int64) bool { return id == e.a })

	// Whichever reader applies a report first stalls there, before deleting it
	// (which one is the scheduler's choice: both IDLE on the mailbox).
	stalled, release := make(chan int, 1), make(chan struct{})
	var once sync.Once
	stallFirst := func(reader int) func(uint32) error {
		return func(uint32) error {
			first := false
			once.Do(func() { first = true; stalled <- reader })
			if first {
				<-release
			}
			return nil
		}
	}
	svcA.SetAfterApply(stallFirst(0))
	svcB.SetAfterApply(stallFirst(1))
	reads := []*testsignal.Signal[bounce.Reading]{readA, readB}
	sends, msgs := e.reports()
	e.deliver(msgs...)
	var staller int
	select {
	case staller = <-stalled:
	case <-time.After(time.Minute):
		t.Fatal("no reader applied a report within a minute")
	}
	// The other reads every message, the staller's first among them, the
	// staller having deleted none.
	got := 0
	reads[1-staller].WaitFor(t, func(r bounce.Reading) bool {
		require.NoError(t, r.Err)
		got += r.Read
		return got >= len(msgs)
	})
	close(release)
	reads[staller].WaitFor(t, func(r bounce.Reading) bool { return r.Read > 0 })
	stopA()
	stopB()
	require.Zero(t, e.inbox())
	e.requireApplied(sends)
}

// A mailbox changed while it is watched (a new password, another host) is let
// go and read again under its new settings: a new connection, a new IDLE.
func TestMailboxChangedWhileWatchedIsConnectedAgain(t *testing.T) {
	t.Parallel()
	e := setup(t)
	svc := e.service(bounce.Options{Interval: 20 * time.Millisecond})
	_, idling := svc.InitSignals()
	e.run(svc)
	idling.WaitFor(t, func(id int64) bool { return id == e.a })
	first, err := e.svc.Get(e.ctx, e.a)
	require.NoError(t, err)

	host, port, _ := net.SplitHostPort(e.imapAddr)
	p, _ := strconv.Atoi(port)
	_, err = e.svc.Put(e.ctx, e.a, bounce.MailboxInput{Host: host, Port: p, Security: "none", Username: "username",
		Password: "password", Enabled: true})
	require.NoError(t, err)
	// The old watcher may IDLE again meanwhile (a wake-up with nothing new):
	// the IDLE waited for is the one on a new connection.
	idling.WaitFor(t, func(id int64) bool {
		mb, err := e.svc.Get(e.ctx, e.a)
		require.NoError(t, err)
		return id == e.a && mb.LastConnectedAt.After(*first.LastConnectedAt)
	})
}
