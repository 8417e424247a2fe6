package bench

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProcStatReadsThisProcess: the /proc/<pid>/stat fields the cost line uses are
// the ones proc(5) names, checked on this process against what Go reports.
func TestProcStatReadsThisProcess(t *testing.T) {
	t.Parallel()
	require.Equal(t, os.Getppid(), parentOf(os.Getpid()))
	x := 0
	for cpu := processCPU(os.Getpid()); processCPU(os.Getpid()) < cpu+0.05; {
		x++ // burn CPU until the kernel has counted 50 ms more
	}
	require.Positive(t, x)
	require.InDelta(t, selfCPU(), processCPU(os.Getpid()), 0.5, "getrusage and /proc agree")
	require.Zero(t, processCPU(-1))
}

func TestLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "/var/run/postgresql": true,
		"10.0.0.5": false, "db.example.com": false} {
		require.Equal(t, want, loopback(host), host)
	}
}
