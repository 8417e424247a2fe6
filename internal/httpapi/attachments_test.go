package httpapi_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
)

func file(name, content string, extra ...string) map[string]any {
	f := map[string]any{"filename": name, "content": content}
	for i := 0; i+1 < len(extra); i += 2 {
		f[extra[i]] = extra[i+1]
	}
	return f
}

func b64s(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// A message with attachments, copies and a Reply-To list is accepted, answers
// with what it stored, and account B neither sees it nor shares its files.
func TestMessageAttachmentsAccepted(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := receipt(map[string]any{
		"reply_to": []string{"help@example.com", "billing@example.com"},
		"cc":       []string{"cc@example.org"}, "bcc": []string{"audit@example.net"},
		"attachments": []any{file("invoice.pdf", b64s("%PDF-1.4 invoice")),
			file("logo.png", b64s("png"), "content_type", "image/png", "content_id", "logo@shop")},
	})
	res := e.do(e.keyA, "POST", "/v1/messages", body, "Idempotency-Key", "att-1")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	m := decodeAs[api.Message](t, res)
	require.Equal(t, "help@example.com", m.ReplyTo)
	require.Equal(t, []string{"help@example.com", "billing@example.com"}, m.ReplyToList)
	require.Equal(t, []string{"cc@example.org"}, m.Cc)
	require.Equal(t, []string{"audit@example.net"}, m.Bcc)
	require.Len(t, m.Attachments, 2)
	require.Equal(t, "application/pdf", m.Attachments[0].ContentType)
	require.Equal(t, len("%PDF-1.4 invoice"), m.Attachments[0].Size)
	require.Equal(t, "logo@shop", m.Attachments[1].ContentId)

	// A one-address list and the string are one request (the same hash).
	one := receipt(map[string]any{"reply_to": "help@example.com"})
	res = e.do(e.keyA, "POST", "/v1/messages", one, "Idempotency-Key", "att-2")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	one["reply_to"] = []string{"help@example.com"}
	res = e.do(e.keyA, "POST", "/v1/messages", one, "Idempotency-Key", "att-2")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	require.Equal(t, "true", res.Header.Get("Idempotent-Replayed"))

	res = e.do(e.keyA, "GET", "/v1/messages", nil)
	require.Equal(t, http.StatusOK, res.Status)
	page := decodeAs[api.MessagePage](t, res)
	require.Len(t, page.Data[0].Attachments, 2)

	// Account B: 404 for A's message; the same file stored again under B.
	path := "/v1/messages/" + itoa(m.Id)
	require.Equal(t, http.StatusNotFound, e.do(e.keyB, "GET", path, nil).Status)
	res = e.do(e.keyB, "POST", "/v1/messages", body, "Idempotency-Key", "att-1")
	require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
	var blobs, accounts int
	require.NoError(t, e.pool.QueryRow(context.Background(),
		"SELECT count(*), count(DISTINCT account_id) FROM attachment_blobs").Scan(&blobs, &accounts))
	require.Equal(t, 4, blobs, "two files per account, each stored once per account")
	require.Equal(t, 2, accounts)
}

// Every new field refuses hostile input with a 422 naming it, and stores nothing.
func TestMessageAttachmentsRefuseHostileInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ok := b64s("x")
	many := make([]any, 21)
	for i := range many {
		many[i] = file("f"+itoa(int64(i)), ok)
	}
	tooManyCc := make([]string, 50)
	for i := range tooManyCc {
		tooManyCc[i] = "c" + itoa(int64(i)) + "@example.org"
	}
	cases := []struct {
		name    string
		extra   map[string]any
		pointer string
	}{
		{"bad base64", map[string]any{"attachments": []any{file("a.txt", ok), file("b.txt", "not base64!")}}, "/attachments/1/content"},
		{"base64 with line breaks", map[string]any{"attachments": []any{file("a.txt", "eA==\neA==")}}, "/attachments/0/content"},
		{"slash in name", map[string]any{"attachments": []any{file("../etc/passwd", ok)}}, "/attachments/0/filename"},
		{"backslash in name", map[string]any{"attachments": []any{file(`C:\x.exe`, ok)}}, "/attachments/0/filename"},
		{"line break in name", map[string]any{"attachments": []any{file("a\r\nContent-Type: text/html", ok)}}, "/attachments/0/filename"},
		{"bidi override in name", map[string]any{"attachments": []any{file("invoice\u202Efdp.exe", ok)}}, "/attachments/0/filename"},
		{"dot dot name", map[string]any{"attachments": []any{file("..", ok)}}, "/attachments/0/filename"},
		{"empty name", map[string]any{"attachments": []any{file("", ok)}}, "/attachments/0/filename"},
		{"long name", map[string]any{"attachments": []any{file(strings.Repeat("é", 200), ok)}}, "/attachments/0/filename"},
		{"bad type", map[string]any{"attachments": []any{file("a", ok, "content_type", "pdf")}}, "/attachments/0/content_type"},
		{"multipart type", map[string]any{"attachments": []any{file("a", ok, "content_type", "multipart/mixed; boundary=x")}}, "/attachments/0/content_type"},
		{"type with break", map[string]any{"attachments": []any{file("a", ok, "content_type", "text/plain\r\nBcc: x@y")}}, "/attachments/0/content_type"},
		{"cid with bracket", map[string]any{"attachments": []any{file("a", ok, "content_id", "<x>")}}, "/attachments/0/content_id"},
		{"cid with space", map[string]any{"attachments": []any{file("a", ok, "content_id", "a b")}}, "/attachments/0/content_id"},
		{"duplicate cid", map[string]any{"attachments": []any{file("a", ok, "content_id", "logo"), file("b", ok, "content_id", "LOGO")}}, "/attachments/1/content_id"},
		{"too many files", map[string]any{"attachments": many}, "/attachments"},
		{"unknown field", map[string]any{"attachments": []any{file("a", ok, "path", "/etc/passwd")}}, "/attachments/0/path"},
		{"bad cc", map[string]any{"cc": []string{"ok@example.org", "not an address"}}, "/cc/1"},
		{"cc header injection", map[string]any{"cc": []string{"a@example.org\r\nBcc: x@example.org"}}, "/cc/0"},
		{"bad bcc", map[string]any{"bcc": []string{"@example.org"}}, "/bcc/0"},
		{"bad reply_to list", map[string]any{"reply_to": []string{"ok@example.com", "nope"}}, "/reply_to/1"},
		{"empty reply_to list", map[string]any{"reply_to": []string{}}, "/reply_to"},
		{"reply_to not string or list", map[string]any{"reply_to": 7}, "/reply_to"},
		{"too many copies", map[string]any{"cc": tooManyCc}, "/cc"},
	}
	for _, c := range cases {
		res := e.do(e.keyA, "POST", "/v1/messages", receipt(c.extra), "Idempotency-Key", "hostile")
		require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s: %s", c.name, res.Body)
		require.Contains(t, decodeAs[problem](t, res).pointers(), c.pointer, "%s: %s", c.name, res.Body)
	}
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(),
		"SELECT (SELECT count(*) FROM messages) + (SELECT count(*) FROM attachment_blobs)").Scan(&n))
	require.Zero(t, n)
}

// More than 10 MB of decoded files is 413 naming /attachments, within the
// route's body limit; a body beyond the limit is 413 before it is read; other
// routes keep the general limit.
func TestMessageAttachmentsSizeLimits(t *testing.T) {
	t.Parallel()
	e := setup(t, func(c *config.Config) { c.MessageMaxBodyBytes = 15 << 20 })
	big := base64.StdEncoding.EncodeToString(make([]byte, 5<<20+300_000))
	res := e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"attachments": []any{file("a.bin", big), file("b.bin", big)}}),
		"Idempotency-Key", "big")
	require.Equal(t, http.StatusRequestEntityTooLarge, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/attachments"}, decodeAs[problem](t, res).pointers())

	nearly := base64.StdEncoding.EncodeToString(make([]byte, 10<<20-100))
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"attachments": []any{file("a.bin", nearly)}}),
		"Idempotency-Key", "nearly")
	require.Equal(t, http.StatusAccepted, res.Status, "10 MB in base64 fits this route's body limit: %s", res.Body[:min(len(res.Body), 300)])

	huge := strings.Repeat("A", 16<<20)
	res = e.do(e.keyA, "POST", "/v1/messages", receipt(map[string]any{"attachments": []any{file("a.bin", huge)}}),
		"Idempotency-Key", "huge")
	require.Equal(t, http.StatusRequestEntityTooLarge, res.Status)

	res = e.do(e.keyA, "POST", "/v1/subscribers", map[string]any{"email": "a@example.com", "name": strings.Repeat("x", 2<<20)})
	require.Equal(t, http.StatusRequestEntityTooLarge, res.Status, "other routes keep SENDONCE_MAX_BODY_BYTES")
	res = e.do(e.keyA, "POST", "/v1/messages/batch", map[string]any{"messages": []any{map[string]any{"idempotency_key": "k",
		"message": receipt(map[string]any{"attachments": []any{file("a.bin", nearly)}})}}})
	require.Equal(t, http.StatusRequestEntityTooLarge, res.Status, "the batch keeps SENDONCE_MAX_BODY_BYTES")
}

// A campaign's files: set at create, replaced by an update, removed by [];
// bad files are 422 naming the field and change nothing; another account's
// campaign is 404.
func TestCampaignAttachments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "menu", "subject": "Menu", "from_email": "a@example.com",
		"text_template": "Hi", "attachments": []any{file("menu.pdf", b64s("%PDF menu"))}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	c := decodeAs[api.Campaign](t, res)
	require.NotNil(t, c.Attachments)
	require.Len(t, *c.Attachments, 1)
	require.Equal(t, "application/pdf", (*c.Attachments)[0].ContentType)
	path := "/v1/campaigns/" + itoa(c.Id)

	res = e.do(e.keyA, "PATCH", path, map[string]any{"attachments": []any{file("a.txt", "###")}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/attachments/0/content"}, decodeAs[problem](t, res).pointers())
	res = e.do(e.keyA, "GET", path, nil)
	require.Len(t, *decodeAs[api.Campaign](t, res).Attachments, 1, "a refused update changes nothing")

	res = e.do(e.keyB, "PATCH", path, map[string]any{"attachments": []any{}})
	require.Equal(t, http.StatusNotFound, res.Status)
	require.Equal(t, http.StatusNotFound, e.do(e.keyB, "GET", path, nil).Status)

	res = e.do(e.keyA, "PATCH", path, map[string]any{"attachments": []any{file("b.txt", b64s("b")), file("c.txt", b64s("c"))}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got := *decodeAs[api.Campaign](t, res).Attachments
	require.Equal(t, []string{"b.txt", "c.txt"}, []string{got[0].Filename, got[1].Filename})
	res = e.do(e.keyA, "PATCH", path, map[string]any{"attachments": []any{}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Empty(t, *decodeAs[api.Campaign](t, res).Attachments)
	var refs int
	require.NoError(t, e.pool.QueryRow(context.Background(), "SELECT count(*) FROM campaign_attachments").Scan(&refs))
	require.Zero(t, refs)
}

// A template's files go to a message made from it that has none of its own (its
// own replace them), and to a campaign made from it, at approval; editing the
// template afterwards changes neither.
func TestTemplateAttachments(t *testing.T) {
	t.Parallel()
	e := setup(t)
	res := e.do(e.keyA, "POST", "/v1/templates", map[string]any{"name": "invoice", "subject": "Invoice", "text": "See attached",
		"attachments": []any{file("terms.pdf", b64s("%PDF terms"))}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	tpl := decodeAs[api.Template](t, res)
	require.Len(t, *tpl.Attachments, 1)
	path := "/v1/templates/" + itoa(tpl.Id)
	res = e.do(e.keyA, "PATCH", path, map[string]any{"attachments": []any{file("bad", "!!")}})
	require.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
	require.Equal(t, []string{"/attachments/0/content"}, decodeAs[problem](t, res).pointers())
	require.Equal(t, http.StatusNotFound, e.do(e.keyB, "PATCH", path, map[string]any{"attachments": []any{}}).Status)

	send := func(key string, extra map[string]any) api.Message {
		body := map[string]any{"to": "ada@example.com", "from": "shop@example.com", "template_id": tpl.Id}
		for k, v := range extra {
			body[k] = v
		}
		res := e.do(e.keyA, "POST", "/v1/messages", body, "Idempotency-Key", key)
		require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
		return decodeAs[api.Message](t, res)
	}
	m := send("t-1", nil)
	require.Equal(t, []string{"terms.pdf"}, []string{m.Attachments[0].Filename})
	own := send("t-2", map[string]any{"attachments": []any{file("own.txt", b64s("own"))}})
	require.Len(t, own.Attachments, 1)
	require.Equal(t, "own.txt", own.Attachments[0].Filename)

	res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "c", "from_email": "shop@example.com", "template_id": tpl.Id})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	c := decodeAs[api.Campaign](t, res)
	require.Empty(t, *c.Attachments, "a draft has only its own files")
	res = e.do(e.keyA, "POST", "/v1/campaigns/"+itoa(c.Id)+"/approve", nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+itoa(c.Id), nil)
	require.Equal(t, "terms.pdf", (*decodeAs[api.Campaign](t, res).Attachments)[0].Filename, "copied at approval")

	res = e.do(e.keyA, "PATCH", path, map[string]any{"attachments": []any{}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Empty(t, *decodeAs[api.Template](t, res).Attachments)
	res = e.do(e.keyA, "GET", "/v1/messages/"+itoa(m.Id), nil)
	require.Len(t, decodeAs[api.Message](t, res).Attachments, 1, "the message keeps what it was accepted with")
	res = e.do(e.keyA, "GET", "/v1/campaigns/"+itoa(c.Id), nil)
	require.Len(t, *decodeAs[api.Campaign](t, res).Attachments, 1, "the approved campaign keeps its copy")
}
