package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sendonce/sendonce/internal/pgcluster"
)

// proc is a child process with its log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan error
	log  string
}

func start(name, dir string, cred *syscall.Credential, env []string, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	// Pdeathsig: nothing outlives the harness if it dies; Setpgid keeps Ctrl-C for the harness.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan error, 1), log: logPath}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// stop sends sig and waits up to d, then kills.
func (p *proc) stop(sig syscall.Signal, d time.Duration) {
	if p == nil {
		return
	}
	select {
	case err := <-p.done:
		p.done <- err
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(d):
		_ = p.cmd.Process.Kill()
		p.done <- <-p.done
	}
}

// node is one PostgreSQL server under Patroni.
type node struct {
	name    string
	pgPort  int
	apiPort int
	dataDir string
	patroni *proc
}

// cluster is etcd and two Patroni nodes on 127.0.0.1.
type cluster struct {
	dir   string
	etcd  *proc
	nodes []*node
	cred  *syscall.Credential
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// patroniYAML is one node's configuration. Timing is Patroni's defaults unless
// the harness was asked for shorter ones (ttl, loop_wait, retry_timeout).
func patroniYAML(c *cluster, n *node, etcdPort int, o options, bin string) string {
	return fmt.Sprintf(`scope: sendonce-failover
name: %[1]s
restapi:
  listen: 127.0.0.1:%[2]d
  connect_address: 127.0.0.1:%[2]d
etcd3:
  hosts: 127.0.0.1:%[3]d
bootstrap:
  dcs:
    ttl: %[4]d
    loop_wait: %[5]d
    retry_timeout: %[6]d
    maximum_lag_on_failover: %[13]d
    synchronous_mode: %[7]t
    postgresql:
      use_pg_rewind: false
      parameters:
        max_connections: 300
        wal_level: replica
        hot_standby: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - locale: C
    - auth: trust
  pg_hba:
    - host replication replicator 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:%[8]d
  connect_address: 127.0.0.1:%[8]d
  data_dir: %[9]s
  bin_dir: %[10]s
  pgpass: %[11]s
  authentication:
    replication: {username: replicator, password: rep}
    superuser: {username: postgres, password: pg}
  parameters:
    unix_socket_directories: %[12]s
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
`, n.name, n.apiPort, etcdPort, o.ttl, o.loopWait, o.retryTimeout, !o.async, n.pgPort, n.dataDir, bin,
		filepath.Join(c.dir, n.name+".pgpass"), c.dir, maxLag(o))
}

// maxLag is Patroni's maximum_lag_on_failover: 1 MB, except when the run cuts the
// standby off on purpose (-lag), where a standby behind by more must still be
// promoted to show what asynchronous replication loses.
func maxLag(o options) int {
	if o.lag > 0 {
		return 1 << 30
	}
	return 1 << 20
}

// pauseReplication stops n's WAL receiver (SIGSTOP): from now on the primary's
// commits do not reach n, as when a standby falls behind under load or a network
// hiccup. The returned function lets it run again.
func (c *cluster) pauseReplication(n *node) (func(), error) {
	pid, err := postmasterPID(n.dataDir)
	if err != nil {
		return nil, err
	}
	for _, k := range childrenOf(pid) {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(k), "cmdline"))
		if strings.Contains(string(cmdline), "walreceiver") {
			if err := syscall.Kill(k, syscall.SIGSTOP); err != nil {
				return nil, err
			}
			return func() { _ = syscall.Kill(k, syscall.SIGCONT) }, nil
		}
	}
	return nil, fmt.Errorf("%s has no walreceiver process", n.name)
}

func startCluster(ctx context.Context, o options) (*cluster, error) {
	cred, err := pgcluster.PostgresCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(os.TempDir(), "sendonce-failover-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return nil, err
	}
	bin, err := patroniBinDir()
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, cred: cred}
	etcdPort, peerPort := freePort(), freePort()
	c.etcd, err = start("etcd", dir, nil, nil, "etcd", "--name", "f", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPort),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPort),
		"--initial-cluster", fmt.Sprintf("f=http://127.0.0.1:%d", peerPort))
	if err != nil {
		return c, err
	}
	if err := waitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d/health", etcdPort), 30*time.Second); err != nil {
		return c, fmt.Errorf("etcd: %w", err)
	}
	for i := 1; i <= 2; i++ {
		n := &node{name: "node" + strconv.Itoa(i), pgPort: freePort(), apiPort: freePort(),
			dataDir: filepath.Join(dir, "node"+strconv.Itoa(i))}
		c.nodes = append(c.nodes, n)
		cfg := filepath.Join(dir, n.name+".yml")
		if err := os.WriteFile(cfg, []byte(patroniYAML(c, n, etcdPort, o, bin)), 0o644); err != nil {
			return c, err
		}
		if n.patroni, err = start(n.name, dir, cred, nil, "patroni", cfg); err != nil {
			return c, err
		}
		// The first node bootstraps and leads; the second clones it and follows.
		want := "/primary"
		if i == 2 {
			want = "/replica"
			if !o.async {
				want = "/sync"
			}
		}
		if err := waitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d%s", n.apiPort, want), 180*time.Second); err != nil {
			return c, fmt.Errorf("%s never answered 200 on %s: %w (see %s)", n.name, want, err, n.patroni.log)
		}
	}
	return c, nil
}

// url is a multi-host URL that finds the primary wherever it is.
func (c *cluster) url(db string) string {
	var hosts []string
	for _, n := range c.nodes {
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", n.pgPort))
	}
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable&target_session_attrs=read-write&connect_timeout=3",
		strings.Join(hosts, ","), db)
}

// leader is the node whose Patroni answers 200 on /primary.
func (c *cluster) leader() *node {
	for _, n := range c.nodes {
		if ok(fmt.Sprintf("http://127.0.0.1:%d/primary", n.apiPort)) {
			return n
		}
	}
	return nil
}

// killNode kills a node as a crash of its machine would: Patroni first (so it cannot
// restart PostgreSQL and keep the leader key), then the postmaster and every backend.
func (c *cluster) killNode(n *node) error {
	_ = n.patroni.cmd.Process.Signal(syscall.SIGKILL)
	pid, err := postmasterPID(n.dataDir)
	if err != nil {
		return err
	}
	// The backends are the postmaster's children: kill them with it, so none lingers.
	kids := childrenOf(pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	return nil
}

func postmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(line))
}

func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command in parentheses: state, ppid.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

func (c *cluster) stop() {
	for _, n := range c.nodes {
		n.patroni.stop(syscall.SIGTERM, 30*time.Second)
		// A killed node's postgres is gone; a stopped Patroni stops its own.
		if pid, err := postmasterPID(n.dataDir); err == nil {
			_ = syscall.Kill(pid, syscall.SIGQUIT)
		}
	}
	c.etcd.stop(syscall.SIGTERM, 10*time.Second)
}

func ok(url string) bool {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func waitHTTP(ctx context.Context, url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for !ok(url) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not 200 within %s", url, d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// patroniBinDir is a folder with every PostgreSQL server tool Patroni calls
// (pg_controldata, pg_basebackup, pg_ctl), not only the few some PATH folders hold.
func patroniBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	if b, err := pgcluster.BinDir(); err == nil {
		dirs = append(dirs, b)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_controldata")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL folder with pg_controldata (apt-get install postgresql)")
}
