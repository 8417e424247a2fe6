// Package address validates and normalises email addresses: a bare addr-spec (RFC
// 5322), RFC 5321 §4.5.3.1 length limits (local part 64, address 254 octets per RFC
// 3696 erratum 1690), an IDNA (ASCII) domain with at
// least two labels, an ASCII local part whose case is kept for sending, and a lower-case
// key for uniqueness and suppression matching.
package address

import (
	"errors"
	"net/mail"
	"strings"

	"golang.org/x/net/idna"
)

// Address is a validated address.
type Address struct {
	// Email is what is sent to: the local part as given, the domain in lower-case ASCII.
	Email string
	// Lower is the key for uniqueness and suppressions: Email in lower case.
	Lower string
}

var profile = idna.New(idna.MapForLookup(), idna.VerifyDNSLength(true), idna.BidiRule(), idna.StrictDomainName(true))

// Parse validates s and returns its normalised forms, or an error saying what is wrong
// in words fit for an API response.
func Parse(s string) (Address, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return Address{}, errors.New("email is required")
	case len(s) > 254:
		return Address{}, errors.New("email is longer than 254 characters")
	case strings.ContainsAny(s, "\r\n\x00"):
		return Address{}, errors.New("email contains a control character")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return Address{}, errors.New("email must be a bare address such as ada@example.com, without a display name, comment or quotes")
	}
	at := strings.LastIndexByte(s, '@')
	local, domain := s[:at], s[at+1:]
	switch {
	case len(local) > 64:
		return Address{}, errors.New("the part before @ is longer than 64 characters")
	case strings.HasPrefix(domain, "["):
		return Address{}, errors.New("IP-address domains are not accepted")
	}
	for i := 0; i < len(local); i++ {
		if local[i] >= 0x80 {
			return Address{}, errors.New("non-ASCII characters before @ are not supported")
		}
	}
	ascii, err := profile.ToASCII(domain)
	if err != nil || strings.HasSuffix(ascii, ".") || !strings.Contains(ascii, ".") || len(ascii) > 253 {
		return Address{}, errors.New("the domain is not a valid internet domain name")
	}
	email := local + "@" + ascii
	if len(email) > 254 {
		return Address{}, errors.New("email is longer than 254 characters")
	}
	return Address{Email: email, Lower: strings.ToLower(email)}, nil
}
