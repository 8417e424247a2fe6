package bounce

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/emersion/go-imap/client"

	"github.com/sendonce/sendonce/internal/backoff"
	"github.com/sendonce/sendonce/internal/store"
)

// session is one connection to a mailbox: logged in, its folder selected once
// open returns it. The server's unsolicited updates are drained as they come
// (go-imap blocks its reader on an unread update); a new message (EXISTS,
// RECENT) leaves a wake-up. SELECT's own EXISTS leaves one too (go-imap passes
// it on as it does any): one empty reading after a connection's first IDLE.
type session struct {
	c *client.Client
	// idle: the server offers IDLE.
	idle bool
	// wake holds one wake-up: a new message arrived since the last read began.
	wake chan struct{}
	// drained is closed when the drain has ended (the connection is closed).
	drained chan struct{}
	// unbind undoes the cut of the connection when ctx ends.
	unbind func() bool
}

// newSession takes c over: its updates are drained until it is closed, and it
// is cut when ctx ends, so that no command outlives the reader.
func newSession(ctx context.Context, c *client.Client) *session {
	updates := make(chan client.Update, 64)
	c.Updates = updates
	s := &session{c: c, wake: make(chan struct{}, 1), drained: make(chan struct{})}
	go func() {
		defer close(s.drained)
		for {
			select {
			case u := <-updates:
				if _, ok := u.(*client.MailboxUpdate); ok {
					select {
					case s.wake <- struct{}{}:
					default:
					}
				}
			case <-c.LoggedOut():
				return
			}
		}
	}()
	s.unbind = context.AfterFunc(ctx, func() { c.Terminate() }) //nolint:errcheck // the cut command reports it
	return s
}

// mode is the mode a reader of this connection is in: idle when the server
// offers IDLE; "" without a connection.
func (s *session) mode() string {
	switch {
	case s == nil:
		return ""
	case s.idle:
		return ModeIdle
	}
	return ModePoll
}

// close logs out (when the connection is still up) and waits for the drain.
func (s *session) close() {
	s.unbind()
	select {
	case <-s.c.LoggedOut():
	default:
		s.c.Logout() //nolint:errcheck // what mattered was read before
	}
	s.c.Terminate() //nolint:errcheck // closed already after a logout
	<-s.drained
}

// errIdleEnded is an IDLE the server ended by itself: the reader reads and
// issues the next one.
var errIdleEnded = errors.New("imap: the server ended IDLE")

// idleUntil issues IDLE and ends it when a new message arrives, after restart
// (RFC 2177: re-issue at least every 29 minutes, or the server may log the
// client out) or when ctx ends. An error means the connection failed.
func (s *session) idleUntil(ctx context.Context, restart, commandTimeout time.Duration) error {
	stop := make(chan struct{})
	done := make(chan error, 1)
	// The IDLE command may last until restart: its deadline is beyond that.
	s.c.Timeout = restart + commandTimeout
	go func() { done <- s.c.Idle(stop, &client.IdleOptions{LogoutTimeout: -1}) }()
	timer := time.NewTimer(restart)
	defer timer.Stop()
	var err error
	select {
	case <-s.wake:
	case <-timer.C:
	case <-ctx.Done():
	case err = <-done:
		// go-imap's IDLE waits on stop to send DONE: it is always closed.
		close(stop)
		if err == nil {
			err = errIdleEnded
		}
		s.c.Timeout = commandTimeout
		return err
	}
	close(stop)
	err = <-done
	s.c.Timeout = commandTimeout
	return err
}

// watch keeps reading the mailbox over sess, IDLE between readings, until ctx
// ends (Stop, or the mailbox changed: release). A failed connection is made
// again with backoff; a server that no longer offers IDLE hands the mailbox
// back to polling.
func (s *Service) watch(ctx context.Context, mb store.BounceMailbox, sess *session) {
	step := backoff.NewStep(s.opts.Reconnect)
	for {
		err := s.idleLoop(ctx, mb.AccountID, sess)
		sess.close()
		if ctx.Err() != nil {
			return
		}
		if !errors.Is(err, errIdleEnded) {
			s.record(ctx, mb.AccountID, "", PollResult{}, err)
		}
		for {
			timer := time.NewTimer(backoff.Jitter(step.Next(), 0.5, 1))
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			var res PollResult
			sess, res, err = s.open(ctx, mb)
			if ctx.Err() != nil {
				if sess != nil {
					sess.close()
				}
				return
			}
			s.record(ctx, mb.AccountID, sess.mode(), res, err)
			if err == nil {
				break
			}
			if sess != nil {
				sess.close()
			}
		}
		step.Reset()
		if !sess.idle {
			sess.close()
			return
		}
	}
}

// idleLoop IDLEs and reads, for as long as the connection holds and ctx lasts.
func (s *Service) idleLoop(ctx context.Context, accountID int64, sess *session) error {
	for {
		s.signals.idling.Signal(accountID)
		if err := sess.idleUntil(ctx, s.opts.IdleRestart, s.opts.Timeout); err != nil || ctx.Err() != nil {
			return err
		}
		res, err := s.read(ctx, sess.c, accountID)
		if ctx.Err() != nil {
			return nil
		}
		s.record(ctx, accountID, ModeIdle, res, err)
		if err != nil {
			return err
		}
	}
}

// watchers are the mailboxes this process watches, by account.
type watchers struct {
	mu sync.Mutex
	m  map[int64]*watcher
	wg sync.WaitGroup
}

// watcher is one mailbox's watch: the mailbox's updated_at when it connected,
// so a change to it (a new password, another host) makes it let go.
type watcher struct {
	cancel    context.CancelFunc
	done      chan struct{}
	updatedAt time.Time
}

// ids are the accounts watched now; nil w watches none.
func (w *watchers) ids() []int64 {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]int64, 0, len(w.m))
	for id, x := range w.m {
		select {
		case <-x.done:
			delete(w.m, id) // ended: the mailbox is polled (and watched) again when due
		default:
			ids = append(ids, id)
		}
	}
	return ids
}

// start runs watch for the account; cancel ends it.
func (w *watchers) start(cancel context.CancelFunc, accountID int64, updatedAt time.Time, watch func()) {
	x := &watcher{cancel: cancel, done: make(chan struct{}), updatedAt: updatedAt}
	w.mu.Lock()
	w.m[accountID] = x
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(x.done)
		defer cancel()
		watch()
	}()
}

// stopAll ends every watch and waits for them.
func (w *watchers) stopAll() {
	w.mu.Lock()
	for _, x := range w.m {
		x.cancel()
	}
	w.mu.Unlock()
	w.wg.Wait()
}

// release ends the watch of each mailbox deleted, disabled or changed since its
// watcher connected; a changed one is read (and watched) again when next due.
func (s *Service) release(ctx context.Context, w *watchers) {
	ids := w.ids()
	if len(ids) == 0 {
		return
	}
	rows, err := store.New(s.pool).BounceMailboxWatched(ctx, ids)
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Error("bounce mailboxes watched", "err", err)
		}
		return
	}
	current := make(map[int64]time.Time, len(rows))
	for _, r := range rows {
		current[r.AccountID] = r.UpdatedAt
	}
	w.mu.Lock()
	var ended []chan struct{}
	for id, x := range w.m {
		if at, ok := current[id]; !ok || !at.Equal(x.updatedAt) {
			x.cancel()
			ended = append(ended, x.done)
			delete(w.m, id)
		}
	}
	w.mu.Unlock()
	// Waited for, so the next reading of a changed mailbox is not a second
	// connection beside the old one.
	for _, d := range ended {
		<-d
	}
}
