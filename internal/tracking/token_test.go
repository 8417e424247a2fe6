package tracking_test

import (
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/tracking"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

func newTokens(t testing.TB, keys ...string) *tracking.Tokens {
	t.Helper()
	if len(keys) == 0 {
		keys = []string{"k1:0123456789abcdef0123456789abcdef"}
	}
	s, err := token.NewRing(keys)
	require.NoError(t, err)
	return tracking.NewTokens(s, "https://mail.example.com/")
}

func TestClickTokenRoundTripsAndRefusesTampering(t *testing.T) {
	t.Parallel()
	tk := newTokens(t)
	c := tracking.Click{Send: tracking.Send{AccountID: 7, CampaignID: 4242, SendID: 99001}, Link: 3, Links: 5}
	tok := tk.ClickToken(c)
	got, err := tk.OpenClick(tok)
	require.NoError(t, err)
	require.Equal(t, c, got)

	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	bad := map[string]string{
		"empty":             "",
		"truncated":         tok[:len(tok)-2],
		"one char less":     tok[:len(tok)-1],
		"appended":          tok + "A",
		"padding":           tok + "==",
		"newline":           tok[:10] + "\n" + tok[10:],
		"open token":        tk.OpenToken(c.Send),
		"view token":        tk.ViewToken(c.Send),
		"other deployment":  newTokens(t, "k1:fedcba9876543210fedcba9876543210").ClickToken(c),
		"unsubscribe token": unsubscribe.NewSigner(mustRing(t)).Token(7, 4242, 99001),
	}
	for i := range raw { // every byte flipped, payload and tag alike
		b := append([]byte(nil), raw...)
		b[i] ^= 0x01
		bad["flip "+string(rune('a'+i%26))+strings.Repeat("'", i/26)] = base64.RawURLEncoding.EncodeToString(b)
	}
	for name, tok := range bad {
		_, err := tk.OpenClick(tok)
		require.ErrorIs(t, err, tracking.ErrInvalidToken, name)
	}
	// An open token does not open as a click nor a view, and the reverse.
	_, err = tk.OpenSend(tk.ViewToken(c.Send))
	require.ErrorIs(t, err, tracking.ErrInvalidToken)
	_, err = tk.OpenView(tk.OpenToken(c.Send))
	require.ErrorIs(t, err, tracking.ErrInvalidToken)
	s, err := tk.OpenSend(tk.OpenToken(c.Send))
	require.NoError(t, err)
	require.Equal(t, c.Send, s)
}

func TestClickTokenSignedByAnOldKeyStillOpens(t *testing.T) {
	t.Parallel()
	old := newTokens(t, "old:0123456789abcdef0123456789abcdef")
	ring := newTokens(t, "new:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "old:0123456789abcdef0123456789abcdef")
	c := tracking.Click{Send: tracking.Send{AccountID: 1, CampaignID: 2, SendID: 3}, Link: 0, Links: 1}
	got, err := ring.OpenClick(old.ClickToken(c))
	require.NoError(t, err)
	require.Equal(t, c, got)
}

func TestClickTokenRefusesImpossibleClaims(t *testing.T) {
	t.Parallel()
	tk := newTokens(t)
	for name, c := range map[string]tracking.Click{
		"link past the links":  {Send: tracking.Send{AccountID: 1, CampaignID: 2, SendID: 3}, Link: 4, Links: 3},
		"too many links":       {Send: tracking.Send{AccountID: 1, CampaignID: 2, SendID: 3}, Link: 1, Links: 1001},
		"no account":           {Send: tracking.Send{CampaignID: 2, SendID: 3}, Link: 1, Links: 1},
		"no send":              {Send: tracking.Send{AccountID: 1, CampaignID: 2}, Link: 1, Links: 1},
		"negative campaign id": {Send: tracking.Send{AccountID: 1, CampaignID: -2, SendID: 3}, Link: 1, Links: 1},
	} {
		_, err := tk.OpenClick(tk.ClickToken(c))
		require.ErrorIs(t, err, tracking.ErrInvalidToken, name)
	}
}

// TestMessageTokens: a single message's click and open tokens name the message
// as well as its stream and send, under their own domains: each opens only as
// what it is, a campaign token stays a campaign's (MessageID 0), and a payload of
// one kind's shape sealed under the other's domain, or naming message 0, fails.
func TestMessageTokens(t *testing.T) {
	t.Parallel()
	tk := newTokens(t)
	ms := tracking.Send{AccountID: 7, CampaignID: 12, SendID: 99001, MessageID: 555}
	c := tracking.Click{Send: ms, Link: 2, Links: 3}
	tok := tk.ClickToken(c)
	got, err := tk.OpenClick(tok)
	require.NoError(t, err)
	require.Equal(t, c, got)
	open, err := tk.OpenSend(tk.OpenToken(ms))
	require.NoError(t, err)
	require.Equal(t, ms, open)

	cs := ms
	cs.MessageID = 0
	campaign, err := tk.OpenClick(tk.ClickToken(tracking.Click{Send: cs, Link: 2, Links: 3}))
	require.NoError(t, err)
	require.Zero(t, campaign.MessageID, "a campaign token names no message")
	require.NotEqual(t, tok, tk.ClickToken(tracking.Click{Send: cs, Link: 2, Links: 3}))

	_, err = tk.OpenSend(tok)
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "a message click is no open")
	_, err = tk.OpenClick(tk.OpenToken(ms))
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "a message open is no click")
	_, err = tk.OpenView(tk.OpenToken(ms))
	require.ErrorIs(t, err, tracking.ErrInvalidToken)
	_, err = tk.OpenClick(tok[:len(tok)-3] + "AAA")
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "tampered")
	_, err = newTokens(t, "k1:fedcba9876543210fedcba9876543210").OpenClick(tok)
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "another deployment")

	uv := func(v ...uint64) []byte {
		var b []byte
		for _, x := range v {
			b = binary.AppendUvarint(b, x)
		}
		return b
	}
	sg := mustRing(t)
	for name, forged := range map[string]string{
		"message shape under the campaign domain": sg.Seal("click", uv(7, 12, 99001, 555, 2, 3)),
		"campaign shape under the message domain": sg.Seal("mclick", uv(7, 12, 99001, 2, 3)),
		"message 0":          sg.Seal("mclick", uv(7, 12, 99001, 0, 2, 3)),
		"trailing byte":      sg.Seal("mclick", append(uv(7, 12, 99001, 555, 2, 3), 0)),
		"non-minimal varint": sg.Seal("mclick", append(append(uv(7, 12, 99001), 0xab, 0x84, 0x00), uv(2, 3)...)),
	} {
		_, err := tk.OpenClick(forged)
		require.ErrorIs(t, err, tracking.ErrInvalidToken, name)
	}
	for name, forged := range map[string]string{
		"message 0":       sg.Seal("mopen", uv(7, 12, 99001, 0)),
		"campaign shape":  sg.Seal("mopen", uv(7, 12, 99001)),
		"message as open": sg.Seal("open", uv(7, 12, 99001, 555)),
	} {
		_, err := tk.OpenSend(forged)
		require.ErrorIs(t, err, tracking.ErrInvalidToken, name)
	}
	// The forged payloads above are well formed under their own domain.
	ok, err := tk.OpenClick(sg.Seal("mclick", uv(7, 12, 99001, 555, 2, 3)))
	require.NoError(t, err)
	require.Equal(t, c, ok)
}

func mustRing(t testing.TB) *token.Ring {
	s, err := token.NewRing([]string{"k1:0123456789abcdef0123456789abcdef"})
	require.NoError(t, err)
	return s
}

// FuzzOpenClick: whatever the redirect is given, a token either fails or is the
// one spelling of claims this deployment signed, naming a link within its message.
func FuzzOpenClick(f *testing.F) {
	tk := newTokens(f)
	f.Add(tk.ClickToken(tracking.Click{Send: tracking.Send{AccountID: 1, CampaignID: 2, SendID: 3}, Link: 1, Links: 2}))
	f.Add(tk.OpenToken(tracking.Send{AccountID: 1, CampaignID: 2, SendID: 3}))
	f.Add(tk.ClickToken(tracking.Click{Send: tracking.Send{AccountID: 1, CampaignID: 2, SendID: 3, MessageID: 4}, Link: 1, Links: 2}))
	f.Add("")
	f.Add("AQJrMQ")
	f.Fuzz(func(t *testing.T, token string) {
		c, err := tk.OpenClick(token)
		if err != nil {
			require.ErrorIs(t, err, tracking.ErrInvalidToken)
			return
		}
		require.Equal(t, token, tk.ClickToken(c), "a token has one spelling")
		require.True(t, c.Link >= 0 && c.Link <= c.Links && c.Links <= 1000)
		require.True(t, c.AccountID > 0 && c.CampaignID > 0 && c.SendID > 0 && c.MessageID >= 0)
	})
}
