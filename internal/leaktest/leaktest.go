// Package leaktest is the TestMain of every test package: the package's tests run,
// then goleak fails the run if any goroutine outlived them (a loop not stopped, a
// pool not closed, a server not shut down). The goroutines that live as long as the
// test process on purpose are listed here once, each with the reason.
package leaktest

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// processLived are the goroutines that outlive every test by design.
var processLived = []goleak.Option{
	// internal/dbtest starts one throwaway PostgreSQL per test process when no
	// TEST_DATABASE_URL is given (the harness's testdb gives one) and leaves it
	// running until the process exits (Pdeathsig stops it); pgcluster's goroutine
	// waits for that server process.
	goleak.IgnoreAnyFunction("github.com/sendonce/sendonce/internal/pgcluster.Start.func1"),
}

// Main runs the package's tests and then checks that no goroutine leaked; extra
// ignores are for a package's own documented third-party goroutines.
func Main(m *testing.M, ignore ...goleak.Option) {
	goleak.VerifyTestMain(m, append(processLived[:len(processLived):len(processLived)], ignore...)...)
}

// check reports goroutines left running; nil when none.
func check(ignore ...goleak.Option) error {
	if err := goleak.Find(append(processLived[:len(processLived):len(processLived)], ignore...)...); err != nil {
		return fmt.Errorf("leaktest: goroutines outlived the tests: %w", err)
	}
	return nil
}

// Exit is Main for a TestMain that runs m itself (one with a service to stop after
// m.Run): it exits with code, or 1 when it is 0 but goroutines leaked (reported on
// stderr).
func Exit(code int, ignore ...goleak.Option) {
	if code == 0 {
		if err := check(ignore...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}
