// Package pgcluster starts a private PostgreSQL server from the locally installed
// server binaries: for `sendonce dev`, `sendonce bench`, the chaos test and the test
// suite. PostgreSQL refuses to run as root, so when started as root the server runs
// as the `postgres` system user, in a data folder that user owns and can reach.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options configure a cluster.
type Options struct {
	// DataDir holds the cluster; it is created with initdb when it has none.
	DataDir string
	// Port to listen on 127.0.0.1; 0 picks a free one.
	Port int
	// Fast trades durability for speed (fsync off): for tests and benchmarks only.
	Fast bool
	// Settings are extra `-c name=value` server settings.
	Settings []string
}

// Cluster is a running server. Stop it when done; if this process dies first, the
// kernel delivers SIGINT to the server (a fast shutdown) through Pdeathsig.
type Cluster struct {
	DataDir string
	Port    int
	LogPath string
	cmd     *exec.Cmd
	done    chan error
}

// URL returns a connection URL for database name as the postgres superuser.
func (c *Cluster) URL(database string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, database)
}

// BinDir finds the PostgreSQL server binaries: $SENDONCE_PG_BIN, the PATH, then the
// usual package locations, newest version first.
func BinDir() (string, error) {
	if dir := os.Getenv("SENDONCE_PG_BIN"); dir != "" {
		return dir, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	var candidates []string
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin", "/usr/local/pgsql/bin",
		"/opt/homebrew/opt/postgresql@*/bin", "/usr/local/opt/postgresql@*/bin"} {
		m, _ := filepath.Glob(pattern)
		candidates = append(candidates, m...)
	}
	sort.Slice(candidates, func(i, j int) bool { return versionOf(candidates[i]) > versionOf(candidates[j]) })
	for _, dir := range candidates {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	return "", errors.New("PostgreSQL server binaries (initdb, postgres) not found: install the server package " +
		"(Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql@16), " +
		"set SENDONCE_PG_BIN to their folder, or set SENDONCE_DATABASE_URL to use an existing server")
}

func versionOf(dir string) int {
	for _, part := range strings.Split(dir, string(filepath.Separator)) {
		part = strings.TrimPrefix(strings.TrimPrefix(part, "pgsql-"), "postgresql@")
		if n, err := strconv.Atoi(part); err == nil {
			return n
		}
	}
	return 0
}

// PostgresCredential returns the credential the server runs with: nil for a normal
// user, the postgres system user when this process is root.
func PostgresCredential() (*syscall.Credential, error) { return runAs() }

// runAs returns the credential to run the server with: nil for a normal user, the
// postgres system user when this process is root.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root, and PostgreSQL refuses to run as root, but there is no `postgres` " +
			"system user to run it as: install the PostgreSQL server package (it creates that user), run as a normal user, " +
			"or set SENDONCE_DATABASE_URL")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// Reachable reports whether the user with cred can enter dir: every ancestor must be
// searchable by it. It returns the first folder that is not.
func Reachable(dir string, cred *syscall.Credential) (bool, string) {
	if cred == nil {
		return true, ""
	}
	abs, _ := filepath.Abs(dir)
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			sys := st.Sys().(*syscall.Stat_t)
			mode := st.Mode().Perm()
			ok := mode&0o001 != 0 ||
				(sys.Uid == cred.Uid && mode&0o100 != 0) ||
				(sys.Gid == cred.Gid && mode&0o010 != 0)
			if !ok {
				return false, p
			}
		}
		if p == "/" || p == "." {
			return true, ""
		}
	}
}

// Start initialises the data folder if needed and starts the server, returning once
// it accepts connections.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	if ok, blocker := Reachable(dataDir, cred); !ok {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as the postgres user, which cannot enter %s "+
			"(a parent of %s): run `chmod o+x %s`, choose a data folder it can reach with SENDONCE_DATA_DIR "+
			"(for example under /var/tmp), or set SENDONCE_DATABASE_URL", blocker, dataDir, blocker)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dataDir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	logPath := filepath.Join(filepath.Dir(dataDir), filepath.Base(dataDir)+".log")
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		args := []string{"-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"}
		if opts.Fast {
			args = append(args, "--no-sync")
		}
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), args...)
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("initdb %s: %w\n%s", dataDir, err, out)
		}
	}
	port := opts.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	args := []string{"-D", dataDir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=300"}
	if opts.Fast {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	for _, s := range opts.Settings {
		args = append(args, "-c", s)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Setpgid keeps a terminal's Ctrl-C away from the server (we stop it ourselves,
	// after the service); Pdeathsig stops it if this process dies without doing so.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGINT}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	c := &Cluster{DataDir: dataDir, Port: port, LogPath: logPath, cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	if err := c.waitReady(ctx); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case err := <-c.done:
			c.done <- err
			return fmt.Errorf("postgres exited during start-up (%v); see %s:\n%s", err, c.LogPath, tail(c.LogPath))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within 60s; see %s:\n%s", c.LogPath, tail(c.LogPath))
		}
	}
}

// CreateDatabase creates a database unless it exists.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// Stop shuts the server down (fast shutdown), waiting up to 30 seconds before killing it.
func (c *Cluster) Stop() error {
	if c == nil || c.cmd.Process == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done: //nolint:errcheck // the exit status of a server told to stop says nothing more
		return nil
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done //nolint:errcheck // killed: its exit status is the kill
		return errors.New("postgres did not stop within 30s and was killed")
	}
}

// Kill stops the server abruptly, as a crash would (for outage tests).
func (c *Cluster) Kill() {
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	<-c.done //nolint:errcheck // crashed on purpose: its exit status is the crash
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

// TempDataDir makes a fresh folder for a throwaway cluster under the system temp
// folder, which the postgres user can reach even when this process is root.
func TempDataDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp(os.TempDir(), prefix)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Join(dir, "data"), nil
}
