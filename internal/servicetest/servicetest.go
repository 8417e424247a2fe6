// Package servicetest runs the real sendonce binary for tests of its clients (the Go
// SDK and the command line), which see the service only through its API. The binary
// is built once per test process; each service is `sendonce dev` (API, executor, the
// log provider, which sends at once, and a demo account) on a database of its own.
package servicetest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/leaktest"
)

var (
	binary string
)

// Service is one running sendonce.
type Service struct {
	URL    string // base URL, http://127.0.0.1:PORT
	APIKey string // the key of its demo account
	stop   func()
}

// SERVICETEST_LOG=1 copies the services' output to stderr.

// Main builds the binary, optionally starts one service for the whole package and
// hands it to onShared (Example functions cannot take a *testing.T), runs the tests
// and cleans up. Call it from TestMain.
func Main(m *testing.M, withShared bool, onShared func(Service)) {
	dir, err := os.MkdirTemp("", "sendonce-servicetest-")
	if err == nil {
		err = os.Chmod(dir, 0o755) // as root, dev's cluster runs as postgres and must enter it
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "servicetest:", err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "sendonce")
		build := exec.Command("go", "build", "-o", binary, "github.com/sendonce/sendonce/cmd/sendonce")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "servicetest: build sendonce:", err)
			return 1
		}
		if withShared {
			// Its own local cluster in dir (dev starts one when no database is named).
			s, err := start(filepath.Join(dir, "shared"), nil)
			if err != nil {
				fmt.Fprintln(os.Stderr, "servicetest:", err)
				return 1
			}
			defer s.stop()
			if onShared != nil {
				onShared(s)
			}
		}
		return m.Run()
	}()
	leaktest.Exit(code)
}

// Binary is the path of the built sendonce binary.
func Binary() string { return binary }

// Start runs a service on a fresh database of this test (internal/dbtest), stopped
// when the test ends. env adds SENDONCE_* settings.
func Start(t testing.TB, env ...string) Service {
	t.Helper()
	if binary == "" {
		t.Fatal("servicetest: call servicetest.Main from TestMain")
	}
	env = append([]string{"SENDONCE_DATABASE_URL=" + dbtest.URL(t)}, env...)
	s, err := start(t.TempDir(), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// start runs `sendonce dev` with its data in dataDir and returns once it listens
// (dev migrates and makes the demo account before it listens).
func start(dataDir string, env []string) (Service, error) {
	environ := append(CleanEnv(),
		"SENDONCE_DATA_DIR="+dataDir,
		"SENDONCE_ADDR=127.0.0.1:0",
		"SENDONCE_LOG_FORMAT=json",
		"SENDONCE_LOG_LEVEL=info",
	)
	environ = append(environ, env...)
	cmd := exec.Command(binary, "dev")
	cmd.Env = environ
	// SIGTERM if this process dies first: dev then stops its cluster too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return Service{}, fmt.Errorf("servicetest: dev: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		pw.Close()
		close(exited)
	}()
	addrc, keyc := make(chan string, 1), make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			text := sc.Text()
			if key, ok := strings.CutPrefix(text, "SENDONCE_API_KEY="); ok {
				keyc <- strings.TrimSpace(key)
			}
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "api listening" {
				addrc <- line.Addr
			}
			if os.Getenv("SERVICETEST_LOG") != "" {
				fmt.Fprintln(os.Stderr, "sendonce:", text)
			}
		}
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	s := Service{stop: stop}
	timeout := time.After(2 * time.Minute)
	for s.URL == "" || s.APIKey == "" {
		select {
		case a := <-addrc:
			s.URL = "http://" + a
		case k := <-keyc:
			s.APIKey = k
		case <-exited:
			return Service{}, fmt.Errorf("servicetest: dev exited before listening")
		case <-timeout:
			stop()
			return Service{}, fmt.Errorf("servicetest: dev did not listen within 2 minutes")
		}
	}
	return s, nil
}

// CleanEnv is this process's environment without SENDONCE_* settings, so a
// developer's shell cannot change the service (or the command) a test runs.
func CleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SENDONCE_") {
			env = append(env, kv)
		}
	}
	return env
}
