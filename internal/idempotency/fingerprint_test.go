package idempotency

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCanonical: keys sorted at every depth, whitespace gone, numbers as written.
func TestCanonical(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"b":1,"a":{"d":[1, 2.50, {"z":null,"y":true}],"c":"x"}}`: `{"a":{"c":"x","d":[1,2.50,{"y":true,"z":null}]},"b":1}`,
		" \n\t[ 1e3 , -0 , 10.50 ] \n":                             `[1e3,-0,10.50]`,
		`"\u0041\/"`:                                               `"A/"`,
		`{"a":1,"a":2}`:                                            `{"a":2}`,
		`12345678901234567890123`:                                  `12345678901234567890123`,
	} {
		got, err := Canonical([]byte(in))
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, string(got), "%q", in)
	}
	for _, in := range []string{``, `{`, `{"a":1} {"b":2}`, `name=x`, `{"a":1}x`} {
		_, err := Canonical([]byte(in))
		require.Error(t, err, "%q", in)
	}
}

// TestFingerprint: the same route and canonical body match; another route, another
// value or a number written otherwise does not; a body that is not JSON counts
// byte for byte.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	a := Fingerprint("POST /v1/lists", []byte(`{"name":"w","n":1.0}`))
	require.Equal(t, a, Fingerprint("POST /v1/lists", []byte("{ \"n\": 1.0,\n \"name\": \"w\" }")))
	require.NotEqual(t, a, Fingerprint("POST /v1/segments", []byte(`{"name":"w","n":1.0}`)))
	require.NotEqual(t, a, Fingerprint("POST /v1/lists", []byte(`{"name":"w","n":1}`)))
	require.NotEqual(t, a, Fingerprint("POST /v1/lists", []byte(`{"name":"x","n":1.0}`)))
	csv := Fingerprint("POST /v1/lists/1/import", []byte("email\na@example.com\n"))
	require.Equal(t, csv, Fingerprint("POST /v1/lists/1/import", []byte("email\na@example.com\n")))
	require.NotEqual(t, csv, Fingerprint("POST /v1/lists/1/import", []byte("email\r\na@example.com\r\n")))
}
