package user

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTOTPRFC6238Vectors: the SHA-1 rows of RFC 6238 Appendix B (8 digits, the
// ASCII seed "12345678901234567890"), and the 6-digit code of the same step.
func TestTOTPRFC6238Vectors(t *testing.T) {
	t.Parallel()
	seed := []byte("12345678901234567890")
	for _, v := range []struct {
		unix int64
		code string
	}{
		{59, "94287082"},
		{1111111109, "07081804"},
		{1111111111, "14050471"},
		{1234567890, "89005924"},
		{2000000000, "69279037"},
		{20000000000, "65353130"},
	} {
		step := stepOf(time.Unix(v.unix, 0))
		require.Equal(t, v.code, hotp(seed, uint64(step), 8), "T=%d", v.unix)
		// Six digits are the last six of the same truncation.
		got, ok := totpMatch(seed, v.code[2:], time.Unix(v.unix, 0))
		require.True(t, ok, "T=%d", v.unix)
		require.Equal(t, step, got)
	}
	_, ok := totpMatch(seed, "287082", time.Unix(59+90, 0))
	require.False(t, ok, "a code three steps old is refused")
	_, ok = totpMatch(seed, "28708", time.Unix(59, 0))
	require.False(t, ok)
}

// TestPasswordHash: PHC form, a match, a miss, a malformed hash, a password
// past the byte limit.
func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h := HashPassword("correct horse battery")
	require.Regexp(t, `^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`, h)
	require.True(t, VerifyPassword(h, "correct horse battery"))
	require.False(t, VerifyPassword(h, "correct horse batterY"))
	require.False(t, VerifyPassword("$argon2id$v=19$m=1,t=1,p=1$AAAA$AAAA", "x"))
	require.NotEqual(t, h, HashPassword("correct horse battery"), "a fresh salt each time")
	require.Error(t, checkPassword("/password", string(make([]byte, MaxPasswordBytes+1))))
	require.Error(t, checkPassword("/password", "short"))
	require.NoError(t, checkPassword("/password", "long enough pass"))
}
