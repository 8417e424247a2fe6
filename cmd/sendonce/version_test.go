package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionCommand: `sendonce version` and `sendonce --version` print the same
// text, the release first and the Go toolchain last, and need no configuration: a
// setting the server commands would refuse does not stop it.
func TestVersionCommand(t *testing.T) {
	t.Setenv("SENDONCE_WORKERS", "0") // config.Load refuses this
	outputs := map[string]string{}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		root := newRoot()
		root.SetArgs(args)
		root.SetOut(&out)
		root.SetErr(&errOut)
		require.NoError(t, root.ExecuteContext(context.Background()), "%v: %s", args, errOut.String())
		outputs[args[0]] = out.String()
	}
	require.Equal(t, outputs["version"], outputs["--version"])
	lines := strings.Split(strings.TrimSuffix(outputs["version"], "\n"), "\n")
	require.Equal(t, "sendonce "+version, lines[0])
	require.Equal(t, "go:        "+runtime.Version(), lines[len(lines)-1])

	root := newRoot()
	root.SetArgs([]string{"version", "extra"})
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	require.ErrorContains(t, root.ExecuteContext(context.Background()), "usage: sendonce version")
}

// TestWriteVersion: the VCS stamp Go records in a build from a git checkout is
// printed (the commit, marked when the tree had uncommitted changes, and its time);
// a build without one (the Docker image's context has no .git) prints none of it.
func TestWriteVersion(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Path: "github.com/sendonce/sendonce", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-06T06:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	var b strings.Builder
	writeVersion(&b, info, true)
	require.Equal(t, "sendonce "+version+"\n"+
		"module:    github.com/sendonce/sendonce v0.1.0\n"+
		"revision:  0123456789abcdef0123456789abcdef01234567 (modified)\n"+
		"committed: 2026-12-06T06:00:00Z\n"+
		"go:        go1.99.1\n", b.String())

	info.Settings = info.Settings[:0]
	info.Main.Version = ""
	b.Reset()
	writeVersion(&b, info, true)
	require.Equal(t, "sendonce "+version+"\ngo:        go1.99.1\n", b.String())

	b.Reset()
	writeVersion(&b, nil, false)
	require.Equal(t, "sendonce "+version+"\n", b.String())
}

// TestVersionLdflags: the linker flag `make build` and the Dockerfile pass names
// the variable `sendonce version` prints (a renamed variable would leave every
// release reading "dev").
func TestVersionLdflags(t *testing.T) {
	for _, f := range []string{"Makefile", "Dockerfile"} {
		b, err := os.ReadFile(filepath.Join("..", "..", f))
		require.NoError(t, err)
		require.Contains(t, string(b), "-X main.version=", f)
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "sendonce")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, "version").Output()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(out), "sendonce v9.8.7-test\n"), "%s", out)
}
