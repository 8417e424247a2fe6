package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Hostile sign-ups: every field, the body and the path. Each answer is a 4xx
// (problem+json for JSON and other bodies, a page for forms), never a 5xx, and
// nothing is stored.
func TestSignupHostileInput(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	l := o.doubleList(o.keyA, "News", "en")
	lid := itoa(l.Id)
	path := "/p/" + o.pubA + "/subscribe"
	jsonCT := []string{"Content-Type", "application/json"}
	formCT := []string{"Content-Type", "application/x-www-form-urlencoded"}
	cases := []struct {
		name, path, body string
		headers          []string
		want             int
		pointer          string
	}{
		{"bad email", path, `{"email":"not an address","list_ids":[` + lid + `]}`, jsonCT, 422, "/email"},
		{"empty email", path, `{"email":"","list_ids":[` + lid + `]}`, jsonCT, 422, "/email"},
		{"display name", path, `{"email":"Ada <ada@example.com>","list_ids":[` + lid + `]}`, jsonCT, 422, "/email"},
		{"NUL in email", path, `{"email":"ada\u0000@example.com","list_ids":[` + lid + `]}`, jsonCT, 422, "/email"},
		{"NUL in name", path, `{"email":"ada@example.com","name":"A\u0000","list_ids":[` + lid + `]}`, jsonCT, 422, "/name"},
		{"newline in name", path, `{"email":"ada@example.com","name":"A\nBcc: x","list_ids":[` + lid + `]}`, jsonCT, 422, "/name"},
		{"long name", path, `{"email":"ada@example.com","name":"` + strings.Repeat("n", 201) + `","list_ids":[` + lid + `]}`, jsonCT, 422, "/name"},
		{"huge email", path, `{"email":"` + strings.Repeat("a", 300) + `@example.com","list_ids":[` + lid + `]}`, jsonCT, 422, "/email"},
		{"no lists", path, `{"email":"ada@example.com","list_ids":[]}`, jsonCT, 422, "/list_ids"},
		{"lists missing", path, `{"email":"ada@example.com"}`, jsonCT, 422, "/list_ids"},
		{"negative list", path, `{"email":"ada@example.com","list_ids":[-1]}`, jsonCT, 422, "/list_ids/0"},
		{"string list", path, `{"email":"ada@example.com","list_ids":["x"]}`, jsonCT, 422, ""},
		{"huge list id", path, `{"email":"ada@example.com","list_ids":[99999999999999999999]}`, jsonCT, 422, ""},
		{"too many lists", path, `{"email":"ada@example.com","list_ids":[` + strings.Repeat(lid+",", 20) + lid + `]}`, jsonCT, 422, "/list_ids"},
		{"unknown field", path, `{"email":"ada@example.com","list_ids":[` + lid + `],"status":"confirmed"}`, jsonCT, 422, "/status"},
		{"malformed JSON", path, `{"email":`, jsonCT, 422, ""},
		{"two objects", path, `{"email":"ada@example.com","list_ids":[` + lid + `]}{}`, jsonCT, 422, ""},
		{"array body", path, `[1,2]`, jsonCT, 422, ""},
		{"empty array body", path, `[]`, jsonCT, 422, ""},
		{"unpaired surrogate in name", path, `{"email":"ada@example.com","name":"A\ud800","list_ids":[` + lid + `]}`, jsonCT, 422, "/name"},
		{"invalid UTF-8 in name", path, "{\"email\":\"ada@example.com\",\"name\":\"A\xff\",\"list_ids\":[" + lid + "]}", jsonCT, 422, "/name"},
		{"huge JSON", path, `{"email":"ada@example.com","name":"` + strings.Repeat("x", 20<<10) + `","list_ids":[1]}`, jsonCT, 413, ""},
		{"wrong content type", path, `email=ada@example.com`, []string{"Content-Type", "text/plain"}, 415, ""},
		{"no content type", path, `{"email":"ada@example.com","list_ids":[` + lid + `]}`, nil, 415, ""},
		{"bad content type", path, `{}`, []string{"Content-Type", "application/json; charset"}, 415, ""},
		{"unknown account", "/p/pub_nope/subscribe", `{"email":"ada@example.com","list_ids":[` + lid + `]}`, jsonCT, 404, ""},
		{"NUL in public id", "/p/pub%00x/subscribe", `{"email":"ada@example.com","list_ids":[` + lid + `]}`, jsonCT, 404, ""},
		{"invalid UTF-8 public id", "/p/pub%ff/subscribe", `{"email":"ada@example.com","list_ids":[` + lid + `]}`, jsonCT, 404, ""},
		{"long public id", "/p/" + strings.Repeat("p", 500) + "/subscribe", `{"email":"ada@example.com","list_ids":[` + lid + `]}`, jsonCT, 404, ""},
		// Forms: the same fields, answered with pages.
		{"form bad email", path, "email=nope&list_ids=" + lid, formCT, 422, ""},
		{"form NUL email", path, "email=ada%00@example.com&list_ids=" + lid, formCT, 422, ""},
		{"form invalid UTF-8 name", path, "email=ada@example.com&name=%ff%fe&list_ids=" + lid, formCT, 422, ""},
		{"form bad list", path, "email=ada@example.com&list_ids=abc", formCT, 422, ""},
		{"form zero list", path, "email=ada@example.com&list_ids=0", formCT, 422, ""},
		{"form no list", path, "email=ada@example.com", formCT, 422, ""},
		{"form bad escape", path, "email=%zz&list_ids=" + lid, formCT, 422, ""},
		{"form huge", path, "email=ada@example.com&name=" + strings.Repeat("x", 20<<10) + "&list_ids=" + lid, formCT, 413, ""},
		{"multipart without boundary", path, "x", []string{"Content-Type", "multipart/form-data"}, 422, ""},
	}
	for _, c := range cases {
		res := o.raw("POST", c.path, c.body, "192.0.2.1:1", c.headers...)
		require.Equal(t, c.want, res.Status, "%s: %s", c.name, res.Body)
		form := len(c.headers) == 2 && strings.HasPrefix(c.headers[1], "application/x-www-form") ||
			len(c.headers) == 2 && c.headers[1] == "multipart/form-data"
		if form {
			require.Contains(t, res.Header.Get("Content-Type"), "text/html", c.name)
		} else {
			require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"), c.name)
		}
		if c.pointer != "" {
			require.Contains(t, string(res.Body), `"pointer":"`+c.pointer+`"`, c.name)
		}
	}
	// Hostile confirmation tokens: a page saying the link is invalid, never a 5xx.
	for _, tok := range []string{"%00", "%ff%fe", strings.Repeat("A", 5000), "AQ", "..", url.PathEscape("a b")} {
		for _, m := range []string{"GET", "POST"} {
			res := o.raw(m, "/p/confirm/"+tok, "", "192.0.2.1:1")
			require.Equal(t, http.StatusNotFound, res.Status, "%s %s", m, tok)
		}
	}
	var n int
	require.NoError(t, o.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM subscribers) + (SELECT count(*) FROM messages)`).Scan(&n))
	require.Zero(t, n, "a refused sign-up stored something")
}
