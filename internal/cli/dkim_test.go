package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// TestCLIDkimKeys: `dkim keys create` generates an inactive key and prints the
// TXT record to publish, as a zone file line whose strings DNS can hold (at most
// 255 characters each); list shows both keys; activate rotates; the active key
// cannot be deleted (exit 4), an inactive one can; a bad selector is the API's
// 422 naming it and an unknown key is not found.
func TestCLIDkimKeys(t *testing.T) {
	t.Parallel()
	run, _, _ := setup(t)
	ok := func(args ...string) string {
		t.Helper()
		r := run(args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return r.stdout
	}
	out := ok("dkim", "keys", "create", "News.Example.com", "--selector", "s1")
	require.Contains(t, out, "(selector s1, rsa-2048) created, inactive")
	line := out[strings.Index(out, "s1._domainkey."):]
	require.True(t, strings.HasPrefix(line, "s1._domainkey.news.example.com.\tIN\tTXT\t( \"v=DKIM1; k=rsa; p="), line)
	_, quoted, _ := strings.Cut(strings.TrimSpace(line), "( ")
	strs := strings.Split(strings.TrimSuffix(quoted, " )"), "\" \"")
	require.Greater(t, len(strs), 1, "an RSA record is longer than one string: %s", line)
	for _, s := range strs[:len(strs)-1] {
		require.LessOrEqual(t, len(strings.Trim(s, "\"")), 255)
	}

	var k client.DkimKey
	require.NoError(t, json.Unmarshal([]byte(ok("dkim", "keys", "create", "news.example.com", "--selector", "s2",
		"--algorithm", "ed25519", "--json")), &k))
	require.Equal(t, client.DkimKeyAlgorithm("ed25519"), k.Algorithm)
	require.False(t, k.Active)
	require.Equal(t, "s2._domainkey.news.example.com", k.Record.Name)

	out = ok("dkim", "keys", "list", "news.example.com")
	require.Regexp(t, `s1 +rsa-2048 +inactive`, out)
	require.Regexp(t, `s2 +ed25519 +inactive +\S+ +s2\._domainkey\.news\.example\.com`, out)

	var keys []client.DkimKey
	require.NoError(t, json.Unmarshal([]byte(ok("dkim", "keys", "list", "news.example.com", "--json")), &keys))
	require.Len(t, keys, 2)
	first := itoa(keys[0].Id)
	require.Contains(t, ok("dkim", "keys", "activate", "news.example.com", first), "active: SMTP senders sign mail from news.example.com")
	require.Regexp(t, `s1 +rsa-2048 +active since `, ok("dkim", "keys", "list", "news.example.com"))
	r := run("dkim", "keys", "delete", "news.example.com", first)
	require.Equal(t, ExitRefused, r.code, "the active key stays: %s", r.stdout)

	ok("dkim", "keys", "activate", "news.example.com", itoa(k.Id))
	require.Contains(t, ok("dkim", "keys", "delete", "news.example.com", first), "deleted")
	require.NoError(t, json.Unmarshal([]byte(ok("dkim", "keys", "list", "news.example.com", "--json")), &keys))
	require.Len(t, keys, 1)
	require.True(t, keys[0].Active)

	r = run("dkim", "keys", "create", "news.example.com", "--selector", "not a label")
	require.Equal(t, ExitRefused, r.code, r.stdout)
	require.Contains(t, r.stderr, "422 selector must be one DNS label")
	require.Equal(t, ExitNotFound, run("dkim", "keys", "activate", "news.example.com", "999999").code)
	require.Equal(t, ExitUsage, run("dkim", "keys", "delete", "news.example.com").code)
}
