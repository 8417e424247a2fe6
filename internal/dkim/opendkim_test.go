package dkim_test

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dkim"
)

// opendkimTestmsg returns the path of OpenDKIM's opendkim-testmsg. It may be
// missing on a developer's machine (Debian: apt-get install -y opendkim-tools);
// under CI (CI set, as .ci/run sets it) a missing tool fails the test.
func opendkimTestmsg(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"opendkim-testmsg", "/usr/sbin/opendkim-testmsg"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI is set but opendkim-testmsg is not installed (opendkim-tools): the interoperability test must run in CI")
	}
	t.Skip("no opendkim-testmsg: install opendkim-tools to run the OpenDKIM interoperability test")
	return ""
}

// TestOpenDKIMVerifiesOurSignature: OpenDKIM's verifier accepts a message our
// SMTP sender signed, and refuses it once its body is changed. opendkim-testmsg
// looks keys up through the system resolver only (no key file, no server
// option), so it runs in a namespace of its own (unshare: a user, mount and
// network namespace) where /etc/resolv.conf names 127.0.0.1 and this test binary
// answers DNS on port 53 from the test's zone; nothing outside is touched.
func TestOpenDKIMVerifiesOurSignature(t *testing.T) {
	t.Parallel()
	bin := opendkimTestmsg(t)
	unshare, err := exec.LookPath("unshare")
	require.NoError(t, err, "unshare (util-linux) runs opendkim-testmsg against a test DNS zone")
	f := setup(t, nil)
	k, err := f.keys.Create(f.ctx, f.account, "news.example.com", "s1", dkim.RSA2048)
	require.NoError(t, err)
	_, err = f.keys.Activate(f.ctx, f.account, "news.example.com", k.ID)
	require.NoError(t, err)
	f.send(t, message(1))
	raw := f.sink.Messages()[0].Raw
	require.Contains(t, string(raw), "DKIM-Signature:")

	dir := t.TempDir()
	zone, _ := json.Marshal(map[string]string{k.RecordName + ".": k.RecordValue})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zone.json"), zone, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte("nameserver 127.0.0.1\n"), 0o600))
	run := func(msg []byte) (string, error) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "msg.eml"), msg, 0o600))
		cmd := exec.Command(unshare, "-r", "-m", "-n", "sh", "-c",
			`ip link set lo up && mount --bind "$DKIM_NS_DIR/resolv.conf" /etc/resolv.conf && exec "$0" -test.v -test.run='^TestOpenDKIMNamespaceHelper$'`,
			os.Args[0])
		cmd.Env = append(os.Environ(), "DKIM_NS_DIR="+dir, "DKIM_NS_BIN="+bin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run(raw)
	if err != nil && strings.Contains(out, "unshare:") && os.Getenv("CI") == "" {
		t.Skipf("no namespaces here (%s): the OpenDKIM verification cannot run", strings.TrimSpace(out))
	}
	require.NoError(t, err, "opendkim-testmsg must verify our signature: %s", out)
	require.Contains(t, out, "opendkim-testmsg: verified")

	tampered := bytes.Replace(raw, []byte("sale starts today"), []byte("sale starts tomorrow"), 1)
	out, err = run(tampered)
	require.Error(t, err, "a tampered body must not verify: %s", out)
	require.NotContains(t, out, "opendkim-testmsg: verified")
}

// TestOpenDKIMNamespaceHelper is TestOpenDKIMVerifiesOurSignature's other half,
// run only inside its namespace: it answers DNS on 127.0.0.1:53 from the zone
// file and runs opendkim-testmsg on the message, exiting as it does.
func TestOpenDKIMNamespaceHelper(t *testing.T) {
	dir := os.Getenv("DKIM_NS_DIR")
	if dir == "" {
		t.Skip("the namespace half of TestOpenDKIMVerifiesOurSignature")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "zone.json"))
	require.NoError(t, err)
	var zone map[string]string
	require.NoError(t, json.Unmarshal(raw, &zone))
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, req *dns.Msg) {
		q := req.Question[0]
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative = true
		v, ok := zone[strings.ToLower(q.Name)]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeTXT:
			var parts []string
			for len(v) > 255 {
				parts, v = append(parts, v[:255]), v[255:]
			}
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60},
				Txt: append(parts, v)})
		}
		_ = w.WriteMsg(m)
	})
	pc, err := net.ListenPacket("udp", "127.0.0.1:53")
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:53")
	require.NoError(t, err)
	for _, srv := range []*dns.Server{{PacketConn: pc, Handler: handler}, {Listener: ln, Handler: handler}} {
		go func() { _ = srv.ActivateAndServe() }()
		defer srv.Shutdown() //nolint:errcheck // the process ends with the test
	}
	msg, err := os.Open(filepath.Join(dir, "msg.eml"))
	require.NoError(t, err)
	defer msg.Close()
	cmd := exec.Command(os.Getenv("DKIM_NS_BIN"))
	cmd.Stdin = msg
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "opendkim-testmsg: %s", out)
	require.Empty(t, strings.TrimSpace(string(out)), "opendkim-testmsg says nothing when it verifies")
	t.Log("opendkim-testmsg: verified")
}
