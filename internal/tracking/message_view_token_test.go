package tracking_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/tracking"
)

// A single message's "view in browser" token opens that message's view only: it
// is sealed under its own purpose, so it never opens as a campaign's web view,
// a click, an open or an unsubscribe, and none of those opens as it; it decodes
// strictly (four non-zero minimal varints, nothing after them); any change to it
// fails.
func TestMessageViewToken(t *testing.T) {
	t.Parallel()
	tk := newTokens(t)
	ms := tracking.Send{AccountID: 7, CampaignID: 12, SendID: 99001, MessageID: 555}
	tok := tk.MessageViewToken(ms)
	got, err := tk.OpenMessageView(tok)
	require.NoError(t, err)
	require.Equal(t, ms, got)
	require.Equal(t, "https://mail.example.com/v/"+tok, tk.MessageViewURL(ms))

	cs := tracking.Send{AccountID: 7, CampaignID: 12, SendID: 99001}
	for name, other := range map[string]string{
		"campaign view": tk.ViewToken(cs),
		"message open":  tk.OpenToken(ms),
		"message click": tk.ClickToken(tracking.Click{Send: ms, Link: 1, Links: 1}),
		"campaign open": tk.OpenToken(cs),
	} {
		_, err := tk.OpenMessageView(other)
		require.ErrorIs(t, err, tracking.ErrInvalidToken, name)
	}
	_, err = tk.OpenView(tok)
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "a message view is no campaign view")
	_, err = tk.OpenSend(tok)
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "nor an open")
	_, err = tk.OpenClick(tok)
	require.ErrorIs(t, err, tracking.ErrInvalidToken, "nor a click")

	// Every single-character change, a cut and an extension fail.
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range tok {
		c := alphabet[(strings.IndexByte(alphabet, tok[i])+1)%len(alphabet)]
		_, err := tk.OpenMessageView(tok[:i] + string(c) + tok[i+1:])
		require.ErrorIs(t, err, tracking.ErrInvalidToken, "changed at %d", i)
	}
	_, err = tk.OpenMessageView(tok[:len(tok)-1])
	require.ErrorIs(t, err, tracking.ErrInvalidToken)
	_, err = tk.OpenMessageView(tok + "A")
	require.ErrorIs(t, err, tracking.ErrInvalidToken)
	_, err = newTokens(t, "k1:fedcba9876543210fedcba9876543210").OpenMessageView(tok)
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
		"campaign shape":     sg.Seal("mview", uv(7, 12, 99001)),
		"message 0":          sg.Seal("mview", uv(7, 12, 99001, 0)),
		"account 0":          sg.Seal("mview", uv(0, 12, 99001, 555)),
		"trailing byte":      sg.Seal("mview", append(uv(7, 12, 99001, 555), 0)),
		"extra id":           sg.Seal("mview", uv(7, 12, 99001, 555, 1)),
		"non-minimal varint": sg.Seal("mview", append(uv(7, 12, 99001), 0xab, 0x84, 0x00)),
		"huge id":            sg.Seal("mview", uv(7, 12, 99001, 1<<63)),
		"under view purpose": sg.Seal("view", uv(7, 12, 99001, 555)),
	} {
		_, err := tk.OpenMessageView(forged)
		require.ErrorIs(t, err, tracking.ErrInvalidToken, name)
	}
	ok, err := tk.OpenMessageView(sg.Seal("mview", uv(7, 12, 99001, 555)))
	require.NoError(t, err, "the forged payloads above are well formed but for their fault")
	require.Equal(t, ms, ok)
}
