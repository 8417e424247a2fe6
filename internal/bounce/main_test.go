package bounce_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/sendonce/sendonce/internal/leaktest"
)

// go-imap's server (the tests' IMAP server) passes a backend's updates on from
// a goroutine that has no end, and each update from one more that waits for the
// connections to take it; they end with the test process.
func TestMain(m *testing.M) {
	leaktest.Main(m,
		goleak.IgnoreAnyFunction("github.com/emersion/go-imap/server.(*Server).listenUpdates"),
		goleak.IgnoreAnyFunction("github.com/emersion/go-imap/server.(*Server).listenUpdates.func1"),
		goleak.IgnoreAnyFunction("github.com/emersion/go-imap/server.(*Server).listenUpdates.func2"))
}
