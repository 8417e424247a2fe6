package user

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // RFC 6238's default, what authenticator apps compute
	"crypto/subtle"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"time"
)

// TOTP as RFC 6238 defines it and authenticator apps compute it by default:
// HMAC-SHA-1 over the 30-second step count since the Unix epoch (RFC 4226's HOTP
// with a time counter), six digits.
const (
	totpStep      = 30 * time.Second
	totpDigits    = 6
	totpSecretLen = 20 // 160 bits, RFC 4226's recommendation
)

// hotp is RFC 4226 §5.3: the dynamically truncated HMAC of counter, as digits digits.
func hotp(key []byte, counter uint64, digits int) string {
	mac := hmac.New(sha1.New, key)
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	bin := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, bin%mod)
}

// stepOf is the RFC 6238 time step of t.
func stepOf(t time.Time) int64 { return t.Unix() / int64(totpStep/time.Second) }

// totpMatch returns the step, among the one of now and its two neighbours (a
// clock off by up to 30 seconds, or a code typed as it turned), whose code is
// code; ok is false when none is. Every candidate is compared, in constant time.
func totpMatch(key []byte, code string, now time.Time) (step int64, ok bool) {
	if len(code) != totpDigits {
		return 0, false
	}
	cur := stepOf(now)
	for _, s := range []int64{cur - 1, cur, cur + 1} {
		if subtle.ConstantTimeCompare([]byte(hotp(key, uint64(s), totpDigits)), []byte(code)) == 1 && !ok {
			step, ok = s, true
		}
	}
	return step, ok
}

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// otpauthURL is the provisioning URI authenticator apps read from a QR code
// (Google Authenticator's Key Uri Format).
func otpauthURL(issuer, email string, key []byte) string {
	v := url.Values{}
	v.Set("secret", b32.EncodeToString(key))
	v.Set("issuer", issuer)
	v.Set("algorithm", "SHA1")
	v.Set("digits", fmt.Sprint(totpDigits))
	v.Set("period", fmt.Sprint(int(totpStep/time.Second)))
	return "otpauth://totp/" + url.PathEscape(issuer+":"+email) + "?" + v.Encode()
}
