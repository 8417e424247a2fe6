package optin

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// mailName is the sign-up name as the confirmation email may show it (its
// greeting and its To display name): the name, or "" when it looks like a link.
// The confirmation goes to whatever address the form was given, so a name that a
// mail client could turn into a link (a URL, a bare domain, an address) would let
// anyone mail a link to anyone through the tenant's domain. The name is left out
// rather than edited, so no part of a crafted text reaches the mail; it is still
// stored as given, for the tenant.
func mailName(name string) string {
	// Compatibility forms first: a fullwidth "．" or "＠" reads as a dot or an at
	// sign to the reader and to some link detectors.
	n := strings.ToLower(norm.NFKC.String(name))
	for _, s := range []string{"://", "//", "@", "www", "mailto:", "tel:", "\\"} {
		if strings.Contains(n, s) {
			return ""
		}
	}
	r := []rune(n)
	for i := 1; i+1 < len(r); i++ {
		// A dot between two letters or digits ("evil.example", "1.2.3.4") is a
		// domain to a link detector; "J. R. R. Tolkien" has none. The ideographic
		// full stops count as dots, as they do in internationalised domain names.
		if strings.ContainsRune(".。｡/", r[i]) && alnum(r[i-1]) && alnum(r[i+1]) {
			return ""
		}
	}
	return name
}

func alnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
