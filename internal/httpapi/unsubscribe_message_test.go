package httpapi_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/transactional"
)

// withMessage accepts a marketing message to zed@example.com, who is no
// subscriber, with the id of the env's subscriber (3), and returns its stream.
func (e *optoutEnv) withMessage(t *testing.T) (streamID, messageID int64) {
	t.Helper()
	_, err := e.pool.Exec(e.ctx, `SELECT setval(pg_get_serial_sequence('messages', 'id'), $1)`, e.subscriberID-1)
	require.NoError(t, err)
	subject, text := "Offer", "Hi"
	m, _, err := transactional.NewService(e.pool, nil).Send(e.ctx, e.accountID, "offer-1", transactional.Request{
		To: "zed@example.com", From: "shop@example.com", Subject: &subject, Text: &text, Category: transactional.Marketing})
	require.NoError(t, err)
	require.Equal(t, e.subscriberID, m.ID, "the message's id equals the subscriber's")
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT campaign_id FROM sends WHERE job_id = $1`,
		transactional.JobID(e.accountID, "offer-1")).Scan(&streamID))
	return streamID, m.ID
}

// legacyToken is a version 1 token, as links in marketing messages were signed
// before tokens had kinds: the message id in the slot read as a subscriber id.
func (e *optoutEnv) legacyToken(account, campaign, subscriber int64) string {
	p := []byte{1, 2, 'k', '1'}
	for _, v := range []int64{account, campaign, subscriber} {
		p = binary.AppendUvarint(p, uint64(v))
	}
	h := hmac.New(sha256.New, []byte("test-secret-0123456789abcdef"))
	h.Write([]byte("sendonce.unsubscribe.v1"))
	h.Write(p)
	return base64.RawURLEncoding.EncodeToString(h.Sum(p))
}

// addressState is whether address is suppressed, and the env subscriber's
// membership of list.
func (e *optoutEnv) addressState(t *testing.T, address string, list int64) (suppressed bool, member string) {
	t.Helper()
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT EXISTS (SELECT 1 FROM suppressions WHERE account_id = $1 AND email_lower = $2)`,
		e.accountID, address).Scan(&suppressed))
	member, _ = e.membership(t, list)
	return suppressed, member
}

// retain deletes the message and its send row, as message retention does.
func (e *optoutEnv) retain(t *testing.T, stream, msg int64) {
	t.Helper()
	_, err := e.pool.Exec(e.ctx, `WITH d AS (DELETE FROM sends WHERE campaign_id = $1 AND subscriber_id = $2)
		DELETE FROM messages WHERE account_id = $3 AND id = $2`, stream, msg, e.accountID)
	require.NoError(t, err)
}

func get(t *testing.T, link string) (int, string) {
	t.Helper()
	resp, err := http.Get(link)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A marketing message's unsubscribe link acts on the address the message went
// to, never on the subscriber whose id equals the message's: the page shows no
// lists, "save preferences" changes nothing, one-click and "everything" suppress
// the message's address (an unsubscribe suppression, which blocks marketing),
// and after message retention deleted the message the link still suppresses that
// address. The links were once signed with the message id in the subscriber slot,
// so a recipient of message 3 saw and changed subscriber 3's lists.
func TestMessageLinkActsOnItsAddressNotOnTheSubscriberWithItsID(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	a, _ := e.withLists(t)
	stream, msg := e.withMessage(t)
	link, _ := e.signer.MessageLinks(e.url, "")(e.accountID, stream, msg, "zed@example.com")

	code, page := get(t, link)
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, page, "A news", "the subscriber with the message's id")
	code, _ = postForm(t, link, url.Values{"action": {"preferences"}, "list": {}})
	require.Equal(t, http.StatusOK, code)
	suppressed, member := e.addressState(t, "ada@example.com", a)
	require.False(t, suppressed)
	require.Equal(t, "subscribed", member)

	// Retention deletes the message: the link still names its address.
	e.retain(t, stream, msg)
	resp, _ := oneClickPost(t, link, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	suppressed, _ = e.addressState(t, "zed@example.com", a)
	require.True(t, suppressed, "the message's address")
	suppressed, member = e.addressState(t, "ada@example.com", a)
	require.False(t, suppressed, "not the subscriber with the message's id")
	require.Equal(t, "subscribed", member)
	var reason, source string
	require.NoError(t, e.pool.QueryRow(e.ctx, `SELECT reason, source FROM suppressions WHERE email_lower = 'zed@example.com'`).
		Scan(&reason, &source))
	require.Equal(t, []string{"unsubscribe", "one-click:message:" + itoa(msg)}, []string{reason, source})
}

// Links already sent in marketing messages carry version 1 tokens naming the
// stream and, in the subscriber slot, the message. They are read as what they
// were signed for: while the message is kept they act on its address (from its
// send row); once retention deleted it they answer 404 and change nothing, and
// never act on the subscriber whose id equals the message's.
func TestLegacyMessageLinkNeverActsOnASubscriber(t *testing.T) {
	t.Parallel()
	e := setupOptout(t, "")
	a, _ := e.withLists(t)
	stream, msg := e.withMessage(t)
	link := e.url + "/u/" + e.legacyToken(e.accountID, stream, msg)

	code, page := get(t, link)
	require.Equal(t, http.StatusOK, code)
	require.NotContains(t, page, "A news", "the subscriber with the message's id")
	code, _ = postForm(t, link, url.Values{"action": {"preferences"}, "list": {}})
	require.Equal(t, http.StatusOK, code)
	_, member := e.addressState(t, "ada@example.com", a)
	require.Equal(t, "subscribed", member, "save preferences left the subscriber's lists alone")

	// Deleted by retention: the link names nobody.
	e.retain(t, stream, msg)
	resp, _ := oneClickPost(t, link, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	suppressed, member := e.addressState(t, "ada@example.com", a)
	require.False(t, suppressed, "the subscriber with the message's id")
	require.Equal(t, "subscribed", member)

	// A version 1 token of a campaign still works as it always did.
	resp, _ = oneClickPost(t, e.url+"/u/"+e.legacyToken(e.accountID, e.campaignID, e.subscriberID),
		"application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, member = e.addressState(t, "ada@example.com", a)
	require.Equal(t, "unsubscribed", member)
}
