package address_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/address"
)

func TestParse(t *testing.T) {
	t.Parallel()
	long := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a'
		}
		return string(b)
	}
	for _, tc := range []struct {
		in, email, lower string
		ok               bool
	}{
		{"ada@example.com", "ada@example.com", "ada@example.com", true},
		{"  Ada@Example.COM ", "Ada@example.com", "ada@example.com", true},
		{"user+tag@sub.example.org", "user+tag@sub.example.org", "user+tag@sub.example.org", true},
		{"user@bücher.de", "user@xn--bcher-kva.de", "user@xn--bcher-kva.de", true},
		{"user@BÜCHER.de", "user@xn--bcher-kva.de", "user@xn--bcher-kva.de", true},
		{long(64) + "@example.com", long(64) + "@example.com", long(64) + "@example.com", true},
		{"", "", "", false},
		{"Ada <ada@example.com>", "", "", false},
		{"<ada@example.com>", "", "", false},
		{"ada@example.com (Ada)", "", "", false},
		{`"ada lovelace"@example.com`, "", "", false},
		{"ada@example", "", "", false},
		{"ada@example.com.", "", "", false},
		{"ada@[127.0.0.1]", "", "", false},
		{"ada@-example.com", "", "", false},
		{"ada@exa_mple.com", "", "", false},
		{"a..b@example.com", "", "", false},
		{".a@example.com", "", "", false},
		{"üser@example.com", "", "", false},
		{"ada@example.com, bob@example.com", "", "", false},
		{"ada\r\n@example.com", "", "", false},
		{long(65) + "@example.com", "", "", false},
		{"a@" + long(64) + ".com", "", "", false},
		{"a@" + long(60) + "." + long(60) + "." + long(60) + "." + long(60) + ".com", "a@" + long(60) + "." + long(60) + "." + long(60) + "." + long(60) + ".com", "a@" + long(60) + "." + long(60) + "." + long(60) + "." + long(60) + ".com", true},
		{"a@" + long(60) + "." + long(60) + "." + long(60) + "." + long(60) + "." + long(60) + ".com", "", "", false},
	} {
		got, err := address.Parse(tc.in)
		if !tc.ok {
			require.Error(t, err, "input %q", tc.in)
			continue
		}
		require.NoError(t, err, "input %q", tc.in)
		require.Equal(t, tc.email, got.Email)
		require.Equal(t, tc.lower, got.Lower)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"ada@example.com", "A <a@b.c>", "a@bücher.de", "\"x\"@y.z", "a@[1.2.3.4]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := address.Parse(s)
		if err != nil {
			return
		}
		again, err := address.Parse(a.Email)
		if err != nil || again != a {
			t.Fatalf("normal form %q of %q does not parse to itself: %v %v", a.Email, s, again, err)
		}
		if len(a.Email) > 254 {
			t.Fatalf("too long: %q", a.Email)
		}
	})
}
