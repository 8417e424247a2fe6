package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// -sendonce is taken out of the arguments wherever it stands, in each of its
// spellings, so a chaos mode (-senders) is still the first argument chaos sees;
// the path must name an executable.
func TestSendonceFlag(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "sendonce")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755))
	for _, args := range [][]string{
		{"-sendonce", bin, "-senders", "-kills", "2"},
		{"--sendonce=" + bin, "-senders", "-kills", "2"},
		{"-senders", "-kills", "2", "-sendonce", bin},
	} {
		got, rest, err := sendonceFlag(args)
		require.NoError(t, err, args)
		require.Equal(t, bin, got)
		require.Equal(t, []string{"-senders", "-kills", "2"}, rest)
	}
	_, _, err := sendonceFlag([]string{"-sendonce"})
	require.ErrorContains(t, err, "needs the path")
	_, _, err = sendonceFlag([]string{"-sendonce", filepath.Join(dir, "missing")})
	require.ErrorContains(t, err, "go build -o bin/sendonce")
}
