package mcpserver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A template cut for its bound ends on a whole character: never half of one.
func TestCutKeepsWholeCharacters(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		n    int
		want string
		cut  bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 4, "hell", true},
		{"héllo", 2, "h", true},  // é is 2 bytes: 1..2
		{"héllo", 3, "hé", true}, // the cut falls after é
		{"€uro", 2, "", true},    // € is 3 bytes
		{"a€", 3, "a", true},
	} {
		got, cut := cut(c.in, c.n)
		require.Equal(t, c.want, got, "%q cut at %d", c.in, c.n)
		require.Equal(t, c.cut, cut, "%q cut at %d", c.in, c.n)
	}
}
