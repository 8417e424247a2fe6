package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// A sign-up name is shown in the confirmation email ("Hello <name>"), which goes
// to whatever address the form was given: a name that carries a link would let
// anyone mail a URL to anyone through the tenant's domain. A link-like name is
// left out of the confirmation (its greeting and its To display name); a plain
// name is kept. The name was once copied verbatim.
func TestConfirmationLeavesOutLinkLikeNames(t *testing.T) {
	t.Parallel()
	o := setupOptin(t)
	list := o.doubleList(o.keyA, "News", "en")
	names := map[string]string{
		"a@example.com": "Claim your prize at https://evil.example/x",
		"b@example.com": "Visit evil.example now",
		"c@example.com": "www.evil.example",
		"d@example.com": "evil．example",
		"e@example.com": "Ada Lovelace",
		"f@example.com": "J. R. R. Tolkien",
	}
	for email, name := range names {
		res := o.raw("POST", "/p/"+o.pubA+"/subscribe",
			`{"email":"`+email+`","name":"`+name+`","list_ids":[`+itoa(list.Id)+`]}`,
			"198.51.100.1:1", "Content-Type", "application/json")
		require.Equal(t, http.StatusAccepted, res.Status, string(res.Body))
	}
	for email, want := range map[string]string{"a@example.com": "", "b@example.com": "", "c@example.com": "",
		"d@example.com": "", "e@example.com": "Ada Lovelace", "f@example.com": "J. R. R. Tolkien"} {
		var toName, data string
		require.NoError(t, o.pool.QueryRow(context.Background(),
			`SELECT to_name, data::text FROM messages WHERE to_email = $1 AND 'optin' = ANY(tags)`, email).Scan(&toName, &data))
		require.Equal(t, want, toName, "%s: %q", email, names[email])
		require.NotContains(t, data, "evil", email)
	}
}
