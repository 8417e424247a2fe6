package bounce_test

import (
	"bytes"
	"io"
	"log"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap"
	"github.com/emersion/go-imap/backend"
	"github.com/emersion/go-imap/backend/memory"
	"github.com/emersion/go-imap/server"
	"github.com/stretchr/testify/require"
)

// imapServer is go-imap's server on its memory backend, made to tell a client
// that IDLEs on a folder of each message another connection appends there (the
// memory backend alone tells only the appending connection), with one lock
// over the mailboxes (the memory backend has none, and two readers share one).
// noIdle makes it a server that does not advertise IDLE; drop cuts every
// connection open, as a network failure would.
type imapServer struct {
	addr   string
	noIdle bool

	mu    sync.Mutex
	conns []net.Conn
}

func startIMAP(t *testing.T, noIdle bool) *imapServer {
	t.Helper()
	be := &updatingBackend{Backend: memory.New(), updates: make(chan backend.Update, 100)}
	srv := server.New(be)
	srv.AllowInsecureAuth = true
	srv.ErrorLog = log.New(io.Discard, "", 0) // the connections the tests cut
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &imapServer{addr: ln.Addr().String(), noIdle: noIdle}
	go srv.Serve(&listener{Listener: ln, s: s}) //nolint:errcheck // ends with Close
	t.Cleanup(func() {
		srv.Close()
		// Also the listener itself: a test that ends before Serve has taken it
		// leaves the listener unknown to Close, and Serve would then wait in
		// Accept for good (goleak: TestMailboxAppliesAReportOnAMessage).
		ln.Close() //nolint:errcheck // closed twice when Serve had it
	})
	return s
}

// drop closes the server's end of every connection open now.
func (s *imapServer) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close() //nolint:errcheck // closing is the point
	}
	s.conns = nil
}

type listener struct {
	net.Listener
	s *imapServer
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.s.mu.Lock()
	l.s.conns = append(l.s.conns, c)
	l.s.mu.Unlock()
	if l.s.noIdle {
		return hideIdle{c}, nil
	}
	return c, nil
}

// hideIdle takes IDLE out of every capability list the server writes.
type hideIdle struct{ net.Conn }

func (c hideIdle) Write(p []byte) (int, error) {
	if _, err := c.Conn.Write(bytes.ReplaceAll(p, []byte(" IDLE"), nil)); err != nil {
		return 0, err
	}
	return len(p), nil
}

var lock sync.Mutex

type updatingBackend struct {
	*memory.Backend
	updates chan backend.Update
}

func (b *updatingBackend) Updates() <-chan backend.Update { return b.updates }

func (b *updatingBackend) Login(ci *imap.ConnInfo, username, password string) (backend.User, error) {
	u, err := b.Backend.Login(ci, username, password)
	if err != nil {
		return nil, err
	}
	return &user{User: u, b: b}, nil
}

type user struct {
	backend.User
	b *updatingBackend
}

func (u *user) GetMailbox(name string) (backend.Mailbox, error) {
	lock.Lock()
	defer lock.Unlock()
	m, err := u.User.GetMailbox(name)
	if err != nil {
		return nil, err
	}
	return &mailbox{Mailbox: m, u: u}, nil
}

type mailbox struct {
	backend.Mailbox
	u *user
}

func (m *mailbox) Status(items []imap.StatusItem) (*imap.MailboxStatus, error) {
	lock.Lock()
	defer lock.Unlock()
	return m.Mailbox.Status(items)
}

func (m *mailbox) ListMessages(uid bool, set *imap.SeqSet, items []imap.FetchItem, ch chan<- *imap.Message) error {
	// Collected under the lock (the memory backend closes inner), sent after it.
	inner := make(chan *imap.Message, 1000)
	lock.Lock()
	err := m.Mailbox.ListMessages(uid, set, items, inner)
	lock.Unlock()
	for msg := range inner {
		ch <- msg
	}
	close(ch)
	return err
}

func (m *mailbox) SearchMessages(uid bool, c *imap.SearchCriteria) ([]uint32, error) {
	lock.Lock()
	defer lock.Unlock()
	return m.Mailbox.SearchMessages(uid, c)
}

func (m *mailbox) CreateMessage(flags []string, date time.Time, body imap.Literal) error {
	lock.Lock()
	err := m.Mailbox.CreateMessage(flags, date, body)
	var st *imap.MailboxStatus
	if err == nil {
		st, err = m.Mailbox.Status([]imap.StatusItem{imap.StatusMessages})
	}
	lock.Unlock()
	if err != nil {
		return err
	}
	// Every connection with this folder selected hears "* n EXISTS".
	m.u.b.updates <- &backend.MailboxUpdate{Update: backend.NewUpdate(m.u.Username(), m.Name()), MailboxStatus: st}
	return nil
}

func (m *mailbox) UpdateMessagesFlags(uid bool, set *imap.SeqSet, op imap.FlagsOp, flags []string) error {
	lock.Lock()
	defer lock.Unlock()
	return m.Mailbox.UpdateMessagesFlags(uid, set, op, flags)
}

func (m *mailbox) Expunge() error {
	lock.Lock()
	defer lock.Unlock()
	return m.Mailbox.Expunge()
}
