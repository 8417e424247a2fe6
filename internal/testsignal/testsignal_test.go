package testsignal

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeTB records a failed wait instead of ending the test.
type fakeTB struct{ failed string }

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
}

func TestSignalOnlyOnceInitialised(t *testing.T) {
	t.Parallel()
	var s Signal[int]
	s.Signal(1) // production: nothing happens, nothing blocks
	var tb fakeTB
	s.WaitFor(&tb, func(int) bool { return true })
	require.Contains(t, tb.failed, "never initialised")

	s.Init()
	go func() {
		for i := 1; i <= 3; i++ {
			s.Signal(i)
		}
	}()
	require.Equal(t, 1, s.Wait(t))
	require.Equal(t, 3, s.WaitFor(t, func(v int) bool { return v > 2 }), "WaitFor skips the signals it does not want")
}

func TestSignalLeftUnreadPanics(t *testing.T) {
	t.Parallel()
	var s Signal[int]
	s.Init()
	for i := range capacity {
		s.Signal(i)
	}
	require.Panics(t, func() { s.Signal(capacity) })
}
