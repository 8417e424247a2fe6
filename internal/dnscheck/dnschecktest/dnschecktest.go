// Package dnschecktest serves a DNS zone on loopback for the tests of the domain
// checks, so that no lookup leaves the machine (these machines have no outside DNS).
package dnschecktest

import (
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// Serve answers on a loopback UDP port, until the test ends, every query for a
// name of zone (lower-case, fully qualified: "example.com.") with its TXT records
// — a record of several strings written with "|" between them — and any other
// name with NXDOMAIN. onQuery, when not nil, is called with the name asked before
// the answer is sent (to count queries, or to act while a check waits). It returns
// the server's address, for SENDONCE_DNS_SERVER or dnscheck.NewResolver.
func Serve(t testing.TB, zone map[string][]string, onQuery func(name string)) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		q := req.Question[0]
		if onQuery != nil {
			onQuery(q.Name)
		}
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		recs, ok := zone[strings.ToLower(q.Name)]
		if !ok {
			m.Rcode = dns.RcodeNameError
		}
		if q.Qtype == dns.TypeTXT {
			for _, r := range recs {
				m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60},
					Txt: strings.Split(r, "|")})
			}
		}
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}
