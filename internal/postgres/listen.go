package postgres

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// AuthorityChannel is the LISTEN/NOTIFY channel of ended authority: revoking an API
// key sends pg_notify(AuthorityChannel, 'key:<id>'), signing a dashboard session
// out 'session:<id>', inside the transaction that does it, so every process learns
// of it on commit and ends the event streams opened under it at once.
const AuthorityChannel = "sendonce_authority"

// Listener holds one LISTEN connection and hands each notification to the handler
// of its channel. It reconnects with backoff; after each (re)connect it calls every
// handler's connected function, since notifications sent while it was disconnected
// are lost.
type Listener struct {
	pool *pgxpool.Pool
	log  *slog.Logger

	mu       sync.Mutex
	handlers map[string]listenHandler
	running  bool
}

type listenHandler struct {
	notify    func(payload string)
	connected func()
}

// NewListener makes a Listener that takes its connection from pool, which must keep
// sessions (a transaction pooler would drop the LISTEN after the statement).
func NewListener(pool *pgxpool.Pool, log *slog.Logger) *Listener {
	return &Listener{pool: pool, log: log, handlers: map[string]listenHandler{}}
}

// Handle sets the functions of channel: notify for each notification, connected
// after each (re)connect. Every Handle comes before Run.
func (l *Listener) Handle(channel string, notify func(payload string), connected func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running {
		panic("postgres: Listener.Handle after Run")
	}
	l.handlers[channel] = listenHandler{notify: notify, connected: connected}
}

// Run listens until ctx ends.
func (l *Listener) Run(ctx context.Context) {
	l.mu.Lock()
	l.running = true
	l.mu.Unlock()
	const first, most = 100 * time.Millisecond, 10 * time.Second
	wait := first
	for ctx.Err() == nil {
		connected, err := l.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if connected {
			wait = first
		}
		l.log.Warn("listen connection lost; reconnecting", "err", err, "backoff", wait.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, most)
	}
}

func (l *Listener) listenOnce(ctx context.Context) (bool, error) {
	pc, err := l.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	// Hijacked: the connection leaves the pool for good and is closed here.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	for channel := range l.handlers {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
			return false, err
		}
	}
	for _, h := range l.handlers {
		if h.connected != nil {
			h.connected()
		}
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		if h, ok := l.handlers[n.Channel]; ok && h.notify != nil {
			h.notify(n.Payload)
		}
	}
}
