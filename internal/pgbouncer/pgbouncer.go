// Package pgbouncer starts a throwaway PgBouncer on 127.0.0.1 in front of a
// PostgreSQL server, for the tests and harnesses that check the service through a
// transaction pooler. It trusts every client: it is never a production setup.
package pgbouncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/pgcluster"
)

// Options describe the pooler.
type Options struct {
	// Upstream is the server's host:port.
	Upstream string
	// User is the one role clients log in as (trust, as the test clusters use).
	User string
	// PoolMode is session, transaction or statement; default transaction.
	PoolMode string
	// PoolSize is the server connections per database and user; default 10.
	PoolSize int
}

// Bouncer is a running PgBouncer.
type Bouncer struct {
	Port    int
	Dir     string
	LogPath string
	user    string
	cmd     *exec.Cmd
	done    chan error
}

// Binary finds the pgbouncer executable (Debian installs it in /usr/sbin).
func Binary() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer", "/usr/local/bin/pgbouncer"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("pgbouncer not found (apt-get install pgbouncer)")
}

// Start writes a configuration in a fresh folder, starts PgBouncer and returns once
// it passes a query through to the upstream server. PgBouncer refuses to run as
// root, so under root it runs as the postgres user, like the test clusters.
func Start(ctx context.Context, opts Options) (*Bouncer, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(opts.Upstream)
	if err != nil {
		return nil, fmt.Errorf("pgbouncer upstream %q: %w", opts.Upstream, err)
	}
	if opts.User == "" {
		opts.User = "postgres"
	}
	if opts.PoolMode == "" {
		opts.PoolMode = "transaction"
	}
	if opts.PoolSize == 0 {
		opts.PoolSize = 10
	}
	cred, err := pgcluster.PostgresCredential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(os.TempDir(), "sendonce-pgbouncer-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	listen, err := freePort()
	if err != nil {
		return nil, err
	}
	b := &Bouncer{Port: listen, Dir: dir, LogPath: filepath.Join(dir, "pgbouncer.log"), user: opts.User,
		done: make(chan error, 1)}
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = %s
default_pool_size = %d
max_client_conn = 500
logfile = %s
pidfile = %s
ignore_startup_parameters = extra_float_digits,search_path
server_login_retry = 1
`, host, port, listen, filepath.Join(dir, "userlist.txt"), opts.PoolMode, opts.PoolSize, b.LogPath,
		filepath.Join(dir, "pgbouncer.pid"))
	files := map[string]string{
		"pgbouncer.ini": ini,
		"userlist.txt":  fmt.Sprintf("%q \"\"\n", opts.User),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	b.cmd = exec.Command(bin, filepath.Join(dir, "pgbouncer.ini"))
	b.cmd.Dir = dir
	// Pdeathsig stops it with the test process, as the throwaway clusters are.
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGTERM}
	out := &strings.Builder{}
	b.cmd.Stdout, b.cmd.Stderr = out, out
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start pgbouncer: %w", err)
	}
	go func() { b.done <- b.cmd.Wait() }()
	if err := b.waitReady(ctx); err != nil {
		_ = b.Stop()
		return nil, fmt.Errorf("%w\n%s%s", err, out.String(), tail(b.LogPath))
	}
	return b, nil
}

// URL is a connection URL through the pooler to database.
func (b *Bouncer) URL(database string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", b.user, b.Port, database)
}

func (b *Bouncer) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, b.URL("postgres")+"&default_query_exec_mode=simple_protocol")
		if err == nil {
			_, err = conn.Exec(ctx, "SELECT 1")
			conn.Close(ctx)
			if err == nil {
				return nil
			}
		}
		select {
		case werr := <-b.done:
			b.done <- werr
			return fmt.Errorf("pgbouncer exited during start-up (%v)", werr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgbouncer did not pass a query within 30s: %v", err)
		}
	}
}

// Stop ends PgBouncer (SIGINT: a safe shutdown that does not wait for clients).
func (b *Bouncer) Stop() error {
	if b == nil || b.cmd == nil || b.cmd.Process == nil {
		return nil
	}
	_ = b.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-b.done: //nolint:errcheck // the exit status of a bouncer told to stop says nothing more
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.done //nolint:errcheck // killed: its exit status is the kill
	}
	return os.RemoveAll(b.Dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
