package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/config"
)

// The client address a limit is keyed on: the peer, unless the peer is a trusted
// proxy; then the rightmost X-Forwarded-For entry that is not a trusted proxy, so
// a client cannot pick its own key by sending the header itself.
func TestClientAddrBehindTrustedProxies(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.TrustedProxies = []string{"10.0.0.0/8", "2001:db8:ffff::1"}
	trusting := &Server{}
	var err error
	trusting.trusted, err = cfg.TrustedProxyPrefixes()
	require.NoError(t, err)
	plain := &Server{}

	for _, c := range []struct {
		name, remote string
		xff          []string
		want, plain  string
	}{
		{"no proxy", "198.51.100.7:5000", nil, "198.51.100.7", "198.51.100.7"},
		{"untrusted peer's header is ignored", "198.51.100.7:5000", []string{"203.0.113.9"}, "198.51.100.7", "198.51.100.7"},
		{"one trusted proxy", "10.1.2.3:443", []string{"203.0.113.9"}, "203.0.113.9", "10.1.2.3"},
		{"forged entries left of the client", "10.1.2.3:443", []string{"1.1.1.1, 203.0.113.9"}, "203.0.113.9", "10.1.2.3"},
		{"two trusted hops", "10.1.2.3:443", []string{"203.0.113.9, 10.9.9.9"}, "203.0.113.9", "10.1.2.3"},
		{"several header lines", "10.1.2.3:443", []string{"1.1.1.1", "203.0.113.9,10.9.9.9"}, "203.0.113.9", "10.1.2.3"},
		{"no header from a trusted proxy", "10.1.2.3:443", nil, "10.1.2.3", "10.1.2.3"},
		{"garbage rightmost", "10.1.2.3:443", []string{"203.0.113.9, nonsense"}, "10.1.2.3", "10.1.2.3"},
		{"garbage left of the client", "10.1.2.3:443", []string{"nonsense, 203.0.113.9"}, "203.0.113.9", "10.1.2.3"},
		{"every hop trusted", "10.1.2.3:443", []string{"10.4.4.4, 10.9.9.9"}, "10.4.4.4", "10.1.2.3"},
		{"IPv6 client keyed by its /64", "[2001:db8:ffff::1]:443", []string{"2001:db8:1:2:3:4:5:6"}, "2001:db8:1:2::/64", "2001:db8:ffff::/64"},
		{"IPv4-mapped peer", "[::ffff:10.1.2.3]:443", []string{"203.0.113.9"}, "203.0.113.9", "10.1.2.3"},
	} {
		r := httptest.NewRequest("POST", "/p/x/subscribe", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		require.Equal(t, c.want, trusting.clientAddr(r), c.name)
		require.Equal(t, c.plain, plain.clientAddr(r), c.name+" (no trusted proxies)")
	}
}
