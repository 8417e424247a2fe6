package event

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/liveness"
)

// TestLostDeliveryClaimReleasedPromptly: a claim's COMMIT reaches PostgreSQL and
// commits, and its answer is lost (the connection dies before pgx reads a byte of
// it), as when a primary fails over. The delivery is 'delivering', stamped with
// this worker's id, and the worker keeps beating: no one judges it dead, and its
// own claims skip rows stamped with its id. Before the worker released the rows of
// claims whose answer was lost, the delivery waited for its 30 s lease. Now the
// next claim, the worker holding nothing, hands it back and delivers it at once,
// with the lost attempt uncharged. On an injected clock that does not move: only
// the release can free the row.
func TestLostDeliveryClaimReleasedPromptly(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	rcv := newReceiver(t)
	ep, _ := e.endpoint(rcv.URL, EndpointInput{})
	e.emit(SendSent, map[string]any{"send_id": 1})
	var mu sync.Mutex
	var now time.Time // set once the delivery exists (its next_attempt_at is the database's now())
	cut := &commitCutter{}
	w := e.worker(func(o *WorkerOptions) {
		o.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	})
	w.pool = cuttingPool(t, e.pool, cut)
	eventually(t, func() bool {
		_, err := w.fanout(ctx)
		require.NoError(t, err)
		return len(e.deliveries(ep.ID)) == 1
	})
	mu.Lock()
	now = time.Now().Add(time.Second)
	mu.Unlock()

	cut.arm()
	err := w.claim(ctx)
	require.Error(t, err, "the claim's answer is lost")
	require.True(t, liveness.OutcomeUnknown(err), "a COMMIT sent may have committed: %v", err)
	require.True(t, cut.done(), "the COMMIT of a claim was cut")
	var status string
	var executorID *int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT status, executor_id FROM event_deliveries WHERE endpoint_id = $1`,
		ep.ID).Scan(&status, &executorID))
	require.Equal(t, "delivering", status, "the claim committed")
	require.NotNil(t, executorID)
	var registered bool
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM executors WHERE id = $1)`, *executorID).Scan(&registered))
	require.True(t, registered, "stamped with the worker, which still beats")

	require.NoError(t, w.claim(ctx))
	w.wg.Wait()
	got, _ := rcv.received()
	require.Len(t, got, 1, "the lost claim's delivery still waits for its lease")
	ds := e.deliveries(ep.ID)
	require.Equal(t, "delivered", ds[0].Status)
	require.Equal(t, 1, ds[0].Attempts, "the lost claim's attempt is not counted")
}

// commitCutter cuts, once armed, the answer of the first COMMIT that follows a
// delivery claim statement on the same connection.
type commitCutter struct {
	mu    sync.Mutex
	armed bool
	cut   bool
}

func (c *commitCutter) arm() { c.mu.Lock(); defer c.mu.Unlock(); c.armed = true }

func (c *commitCutter) done() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.cut }

func (c *commitCutter) take() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.armed || c.cut {
		return false
	}
	c.cut = true
	return true
}

// cuttingPool is a pool on pool's database whose connections cut as c says. It
// sends every statement's text (exec mode), so a claim is recognised by its sqlc
// name.
func cuttingPool(t *testing.T, pool *pgxpool.Pool, c *commitCutter) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pool.Config().ConnString())
	require.NoError(t, err)
	cfg.MaxConns = 4
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutConn{Conn: conn, cutter: c}, nil
	}
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// cutConn passes bytes through. Once a delivery claim statement was written on
// it, the next COMMIT (a simple Query message) is let through while its cutter
// has a cut to give; the answer is then read up to ReadyForQuery (the transaction
// has committed) and the connection closed without handing pgx a byte of it.
type cutConn struct {
	net.Conn
	cutter  *commitCutter
	claimed bool
	cutting bool
	closed  bool
}

var claimStatement = []byte("-- name: EventDeliveryClaim ")

func (c *cutConn) Write(b []byte) (int, error) {
	switch {
	case bytes.Contains(b, claimStatement):
		c.claimed = true
	case c.claimed && len(b) > 0 && b[0] == 'Q' && bytes.Contains(bytes.ToLower(b), []byte("commit")):
		c.claimed = false
		c.cutting = c.cutter.take()
	}
	return c.Conn.Write(b)
}

func (c *cutConn) Read(b []byte) (int, error) {
	if !c.cutting {
		return c.Conn.Read(b)
	}
	if c.closed {
		return 0, io.ErrUnexpectedEOF
	}
	c.closed = true
	var answer []byte
	chunk := make([]byte, 8192)
	for !readyForQuery(answer) {
		k, err := c.Conn.Read(chunk)
		answer = append(answer, chunk[:k]...)
		if err != nil {
			break
		}
	}
	_ = c.Conn.Close()
	return 0, io.ErrUnexpectedEOF
}

// readyForQuery reports whether a backend answer is complete.
func readyForQuery(b []byte) bool {
	for len(b) >= 5 {
		l := int(binary.BigEndian.Uint32(b[1:5]))
		if len(b) < 1+l {
			return false
		}
		if b[0] == 'Z' {
			return true
		}
		b = b[1+l:]
	}
	return false
}
