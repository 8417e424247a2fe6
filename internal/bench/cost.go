package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Cost is what one send phase consumed, per 1,000 messages sent.
type Cost struct {
	Messages int64
	// AppCPU is this process's user + system CPU seconds (getrusage), everything the
	// executor does in Go: claim loop, rendering, MIME, provider client, acknowledgements.
	AppCPU float64
	// PGCPU is the CPU seconds of the PostgreSQL backends serving the executors' pools
	// (/proc/<pid>/stat of each connection's backend pid); -1 when the database is
	// not on this host.
	PGCPU float64
	// ClusterCPU is every process of the PostgreSQL cluster over the same window
	// (backends, autovacuum, WAL writer, checkpointer; exited ones through the
	// postmaster's reaped-children times); -1 when unknown.
	ClusterCPU float64
	// Statements is how many statements the executors' pools sent, counted by a pgx
	// tracer on every query, exec and ping.
	Statements int64
}

func (c Cost) per1k(v float64) float64 {
	if c.Messages <= 0 {
		return 0
	}
	return v / float64(c.Messages) * 1000
}

// pgPer1k is PGCPU per 1,000 messages, or n/a when the database is not on this host.
func (c Cost) pgPer1k() string {
	if c.PGCPU < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", c.per1k(c.PGCPU))
}

// Line is the one-line summary `make bench` prints.
func (c Cost) Line() string {
	return fmt.Sprintf("cost: app_cpu_s_per_1k=%.3f pg_cpu_s_per_1k=%s db_statements_per_1k=%.1f",
		c.per1k(c.AppCPU), c.pgPer1k(), c.per1k(float64(c.Statements)))
}

// Detail is the comment line under Line: the whole cluster's CPU and the raw totals.
func (c Cost) Detail() string {
	cluster := "n/a"
	if c.ClusterCPU >= 0 {
		cluster = fmt.Sprintf("%.3f", c.per1k(c.ClusterCPU))
	}
	return fmt.Sprintf("# cost: cluster_cpu_s_per_1k=%s messages=%d app_cpu_s=%.2f pg_cpu_s=%.2f statements=%d",
		cluster, c.Messages, c.AppCPU, c.PGCPU, c.Statements)
}

// meter follows the executors' pools: it learns each connection's backend pid when
// the connection opens, takes that backend's CPU when it closes, and counts every
// statement sent. One meter serves every pool of a send phase.
type meter struct {
	statements atomic.Int64
	local      bool // the database is on this host: its /proc entries are its backends

	mu      sync.Mutex
	started bool
	live    map[uint32]float64 // backend pid → its CPU when the window opened (0 when opened later)
	closed  float64            // CPU of backends that closed inside the window
	pm      int                // the postmaster's pid, found through a backend
}

func newMeter(cfg *pgxpool.Config) *meter {
	return &meter{local: loopback(cfg.ConnConfig.Host), live: map[uint32]float64{}}
}

// loopback reports whether host names this machine (a unix socket or a loopback address).
func loopback(host string) bool {
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// instrument hooks m into a pool configuration.
func (m *meter) instrument(cfg *pgxpool.Config) {
	cfg.ConnConfig.Tracer = statementCounter{&m.statements}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		pid := c.PgConn().PID()
		m.mu.Lock()
		defer m.mu.Unlock()
		m.live[pid] = 0
		if !m.started {
			m.live[pid] = processCPU(int(pid))
		}
		if m.pm == 0 && m.local {
			m.pm = parentOf(int(pid))
		}
		return nil
	}
	cfg.BeforeClose = func(c *pgx.Conn) {
		pid := c.PgConn().PID()
		m.mu.Lock()
		defer m.mu.Unlock()
		if base, ok := m.live[pid]; ok && m.started {
			m.closed += max(0, processCPU(int(pid))-base)
		}
		delete(m.live, pid)
	}
}

// window is the state of the counters when a measured phase began.
type window struct {
	app, cluster float64
	statements   int64
}

// open starts the measured window.
func (m *meter) open() window {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = true
	m.closed = 0
	for pid := range m.live {
		m.live[pid] = processCPU(int(pid))
	}
	return window{app: selfCPU(), cluster: m.clusterCPU(), statements: m.statements.Load()}
}

// close ends the window opened as w and returns what it cost.
func (m *meter) close(w window, messages int64) Cost {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := Cost{Messages: messages, AppCPU: selfCPU() - w.app, Statements: m.statements.Load() - w.statements,
		PGCPU: -1, ClusterCPU: -1}
	if !m.local || m.pm == 0 {
		return c
	}
	c.PGCPU = m.closed
	for pid, base := range m.live {
		c.PGCPU += max(0, processCPU(int(pid))-base)
	}
	if w.cluster >= 0 {
		if now := m.clusterCPU(); now >= 0 {
			c.ClusterCPU = now - w.cluster
		}
	}
	return c
}

// clusterCPU is the CPU of the postmaster, its reaped children and its live ones.
func (m *meter) clusterCPU() float64 {
	if m.pm == 0 {
		return -1
	}
	f, ok := procStat(m.pm)
	if !ok {
		return -1
	}
	total := ticks(f, fieldUtime) + ticks(f, fieldStime) + ticks(f, fieldCutime) + ticks(f, fieldCstime)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := procStat(pid); ok && len(f) > 14 && f[1] == strconv.Itoa(m.pm) {
			total += ticks(f, fieldUtime) + ticks(f, fieldStime)
		}
	}
	return total
}

// statementCounter is a pgx tracer that counts statements.
type statementCounter struct{ n *atomic.Int64 }

func (s statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	s.n.Add(1)
	return ctx
}

func (statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Statements sent in a batch (the executor's claim goes with its plan setting in
// one round trip) count one each.
func (s statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (s statementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	s.n.Add(1)
}

func (statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// selfCPU is this process's user + system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every Linux
// architecture Go supports (sysconf(_SC_CLK_TCK) needs cgo).
const clockTicks = 100

// procStat returns the fields of /proc/<pid>/stat after the command name: f[0] is
// field 3 of proc(5) (the state), f[1] field 4 (the parent pid).
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// Fields of /proc/<pid>/stat as proc(5) numbers them.
const (
	fieldUtime  = 14 // CPU in user mode
	fieldStime  = 15 // CPU in kernel mode
	fieldCutime = 16 // user CPU of reaped children
	fieldCstime = 17 // kernel CPU of reaped children
)

// ticks reads proc(5) field n of a procStat result, in seconds.
func ticks(f []string, n int) float64 {
	if n-3 < 0 || n-3 >= len(f) {
		return 0
	}
	v, _ := strconv.ParseFloat(f[n-3], 64)
	return v / clockTicks
}

// processCPU is a process's own user + system CPU seconds (0 when it is gone).
func processCPU(pid int) float64 {
	f, ok := procStat(pid)
	if !ok {
		return 0
	}
	return ticks(f, fieldUtime) + ticks(f, fieldStime)
}

// parentOf is a process's parent pid (0 when unknown).
func parentOf(pid int) int {
	f, ok := procStat(pid)
	if !ok || len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
