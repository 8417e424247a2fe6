package executor

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// TestStopReturnsWithTheDatabaseDown: the shutdown release of unsent claims is
// bounded, so Stop returns (with an error) when the database accepts connections
// but never answers; the rows stay 'sending' for the rescuer.
func TestStopReturnsWithTheDatabaseDown(t *testing.T) {
	// Not parallel: it shortens the package-wide release timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // accept, never answer
		}
	}()
	pool, err := pgxpool.New(context.Background(), "postgres://u:p@"+ln.Addr().String()+"/db?sslmode=disable")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	old := releaseTimeout
	releaseTimeout = 200 * time.Millisecond
	t.Cleanup(func() { releaseTimeout = old })

	// Built without newExecutor: there is no database to check invariants in.
	e, err := New(pool, newFake(true), Config{}, nil, nil)
	require.NoError(t, err)
	e.released = []claimRef{{1, 1}}
	done := make(chan error, 1)
	go func() { done <- e.Stop(context.Background()) }()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Stop hangs with the database down")
	}
}
