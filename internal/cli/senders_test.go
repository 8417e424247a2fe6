package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
)

// TestCLISendersPacing: a sender created and edited from flags with domain
// limits and a warm-up, shown and listed with today's place in the plan; bad
// flags are usage errors, bad values the API's 422.
func TestCLISendersPacing(t *testing.T) {
	t.Parallel()
	run, _, _ := setup(t)
	ok := func(args ...string) string {
		t.Helper()
		r := run(args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return strings.TrimSpace(r.stdout)
	}
	var s client.Sender
	require.NoError(t, json.Unmarshal([]byte(ok("senders", "create", "--name", "relay", "--type", "http",
		"--url", "https://mail.example.com/send", "--domain-limit", "gmail=5", "--domain-limit", "example.org=0.5",
		"--warmup", "standard@2026-12-01", "--json")), &s))
	require.Len(t, s.DomainLimits, 2)
	require.Equal(t, client.SenderDomainLimitGroup("gmail"), *s.DomainLimits[0].Group)
	require.Equal(t, "example.org", *s.DomainLimits[1].Domain)
	require.Equal(t, 0.5, s.DomainLimits[1].PerSecond)
	require.Equal(t, client.SenderWarmupPreset("standard"), *s.Warmup.Preset)
	id := s.Id

	require.NoError(t, json.Unmarshal([]byte(ok("senders", "edit", itoa(id), "--warmup", "50,100,200@2026-12-01",
		"--json")), &s))
	require.Equal(t, []int{50, 100, 200}, *s.Warmup.Caps)
	require.Len(t, s.DomainLimits, 2, "an edit without --domain-limit keeps them")
	require.NoError(t, json.Unmarshal([]byte(ok("senders", "edit", itoa(id), "--clear-warmup", "--domain-limit", "",
		"--json")), &s))
	require.Nil(t, s.Warmup)
	require.Empty(t, s.DomainLimits)

	// Where the plan stands today, in show and list: day 2 of 3 (it started yesterday).
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	ok("senders", "edit", itoa(id), "--warmup", "5,3,40@"+yesterday, "--domain-limit", "gmail=5", "--domain-limit", "example.org=0.5")
	out := ok("senders", "show", itoa(id))
	require.Regexp(t, `domain limits +gmail=5/s, example\.org=0\.5/s\n`, out)
	require.Regexp(t, `warm-up +5,3,40@`+yesterday+`\n`, out)
	require.Regexp(t, `warm-up today +day 2 of 3: 0 of 3 used$`, out)
	require.Regexp(t, `relay +http +active +unlimited +gmail=5/s, example\.org=0\.5/s +day 2 of 3: 0 of 3 used`, ok("senders", "list"))
	var listed []client.Sender
	require.NoError(t, json.Unmarshal([]byte(ok("senders", "list", "--json")), &listed))
	require.Len(t, listed, 1)
	require.Equal(t, 3, *listed[0].WarmupToday.Cap)
	require.Equal(t, ExitNotFound, run("senders", "show", "999999").code)

	r := run("senders", "edit", itoa(id), "--domain-limit", "gmail")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "GROUP=PER_SECOND")
	r = run("senders", "edit", itoa(id), "--warmup", "standard")
	require.Equal(t, 2, r.code, r.stderr)
	r = run("senders", "edit", itoa(id), "--domain-limit", "hotmail.com=0")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "/domain_limits/0/per_second")
}

// TestCLISendersSMTPSettings: an SMTP sender's bounce domain (VERP Return-Path)
// and DKIM signing from flags; an edit of one setting keeps the others (the API
// replaces settings whole, so the command starts from the stored ones), and
// an empty --bounce-domain removes it.
func TestCLISendersSMTPSettings(t *testing.T) {
	t.Parallel()
	run, _, _ := setup(t)
	ok := func(args ...string) client.Sender {
		t.Helper()
		r := run(append(args, "--json")...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		var s client.Sender
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &s))
		return s
	}
	s := ok("senders", "create", "--name", "relay", "--type", "smtp", "--host", "smtp.example.com", "--port", "587",
		"--security", "starttls", "--bounce-domain", "bounces.example.com", "--dkim-sign=false")
	require.Equal(t, "bounces.example.com", *s.Settings.BounceDomain)
	require.False(t, *s.Settings.DkimSign)
	id := itoa(s.Id)

	s = ok("senders", "edit", id, "--bounce-domain", "b.example.org")
	require.Equal(t, "b.example.org", *s.Settings.BounceDomain)
	require.Equal(t, "smtp.example.com", *s.Settings.Host, "the other settings stay")
	require.Equal(t, 587, *s.Settings.Port)
	require.False(t, *s.Settings.DkimSign)

	s = ok("senders", "edit", id, "--bounce-domain", "", "--dkim-sign")
	require.Nil(t, s.Settings.BounceDomain)
	require.True(t, s.Settings.DkimSign == nil || *s.Settings.DkimSign)
	require.Equal(t, "smtp.example.com", *s.Settings.Host)

	r := run("senders", "edit", id, "--bounce-domain", "not a domain")
	require.Equal(t, ExitRefused, r.code, r.stdout)
	require.Contains(t, r.stderr, "bounce_domain")
}
