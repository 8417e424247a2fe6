package user

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"

	"github.com/sendonce/sendonce/internal/apperr"
)

// Argon2id parameters of new password hashes: OWASP's first recommended set
// (19 MiB of memory, two passes, one lane), which costs about 30–60 ms of one core
// here: slow for a guesser with a stolen table, bearable for a sign-in. Each
// stored hash carries its own parameters (PHC string form), so raising them later
// leaves existing hashes verifiable.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonSaltLen   = 16
	argonKeyLen    = 32
)

// Password length bounds. Past MaxPasswordBytes a password is refused before it
// is hashed, so a megabyte "password" cannot buy a megabyte of hashing work.
const (
	MinPasswordChars = 10
	MaxPasswordBytes = 1024
)

// checkPassword refuses a password too short, too long or not text.
func checkPassword(pointer, pw string) error {
	switch {
	case len(pw) > MaxPasswordBytes:
		return apperr.Invalidf(pointer, "at most %d bytes", MaxPasswordBytes)
	case !utf8.ValidString(pw) || strings.ContainsRune(pw, 0):
		return apperr.Invalidf(pointer, "must be UTF-8 text without NUL")
	case utf8.RuneCountInString(pw) < MinPasswordChars:
		return apperr.Invalidf(pointer, "at least %d characters", MinPasswordChars)
	}
	return nil
}

// HashPassword returns the argon2id hash of pw in PHC form:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash> (unpadded standard base64).
func HashPassword(pw string) string {
	salt := make([]byte, argonSaltLen)
	_, _ = rand.Read(salt) // crypto/rand.Read never fails (Go 1.24+)
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// dummyHash is verified against when there is no hash to check (an unknown
// address, a user without a password), so those answers take as long as a wrong
// password does and timing does not tell them apart.
var dummyHash = HashPassword("sendonce: no such user; this hash is never matched")

// VerifyPassword reports whether pw matches the PHC string encoded, in constant
// time over the derived key. A malformed string matches nothing.
func VerifyPassword(encoded, pw string) bool {
	if len(pw) > MaxPasswordBytes {
		return false
	}
	p, salt, want, err := parsePHC(encoded)
	if err != nil {
		return false
	}
	got := argon2.IDKey([]byte(pw), salt, p.time, p.memory, p.threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

type argonParams struct {
	memory, time uint32
	threads      uint8
}

func parsePHC(encoded string) (argonParams, []byte, []byte, error) {
	var p argonParams
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, nil, nil, errors.New("not an argon2id hash of this version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.memory, &p.time, &p.threads); err != nil {
		return p, nil, nil, err
	}
	// Bounds, so a tampered row cannot make a sign-in allocate gigabytes.
	if p.memory < 8 || p.memory > 1<<20 || p.time < 1 || p.time > 16 || p.threads < 1 {
		return p, nil, nil, errors.New("argon2id parameters out of bounds")
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return p, nil, nil, err
	}
	key, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 64 {
		return p, nil, nil, errors.New("bad key")
	}
	return p, salt, key, nil
}
