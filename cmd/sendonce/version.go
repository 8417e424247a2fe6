package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version names the release this binary was built from. It is set at link time,
// as `make build` and the Dockerfile do:
//
//	go build -ldflags "-X main.version=$(git describe --tags --always --dirty)" ./cmd/sendonce
//
// A plain `go build` or `go run` leaves it "dev"; the VCS stamp printed beside it
// (from the Go toolchain, when built inside a git checkout) still names the commit.
var version = "dev"

// writeVersion prints the release, then what the Go toolchain recorded about the
// build: module version, commit, commit time, whether the tree had uncommitted
// changes, and the Go version. A field the toolchain did not record (a build
// outside a git checkout, such as the Docker image's, has no vcs.* settings) is
// left out rather than printed empty.
func writeVersion(w io.Writer, info *debug.BuildInfo, ok bool) {
	fmt.Fprintf(w, "sendonce %s\n", version)
	if !ok {
		return
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	line := func(label, value string) { fmt.Fprintf(w, "%-11s%s\n", label+":", value) }
	if v := info.Main.Version; v != "" {
		line("module", info.Main.Path+" "+v)
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		line("revision", rev)
	}
	// vcs.time is the commit's time, not the build's: a reproducible build has no
	// build time of its own.
	if t := settings["vcs.time"]; t != "" {
		line("committed", t)
	}
	line("go", info.GoVersion)
}

// versionText is what `sendonce version` and `sendonce --version` print.
func versionText() string {
	var b strings.Builder
	info, ok := debug.ReadBuildInfo()
	writeVersion(&b, info, ok)
	return b.String()
}
