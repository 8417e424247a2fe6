package provider_test

import (
	"context"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

func benchMessage() provider.Message {
	m := testMessage("campaign:123:456789")
	m.HTML = "<html><body>" + strings.Repeat("<p>News for Ada on the pro plan. Lorem ipsum dolor sit amet.</p>", 40) + "</body></html>"
	m.Text = strings.Repeat("News on the pro plan.\n", 40)
	return m
}

// BenchmarkMIME measures assembling a message's MIME bytes into a reused buffer,
// what the SMTP provider does per message before the network.
func BenchmarkMIME(b *testing.B) {
	m := benchMessage()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = provider.AppendMIME(buf[:0], m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMIMEAttachment measures the same with a 1 MiB attachment (base64 in
// 76-character lines), what a campaign with a file costs per recipient.
func BenchmarkMIMEAttachment(b *testing.B) {
	m := benchMessage()
	m.Attachments = []provider.Attachment{{Filename: "menu.pdf", ContentType: "application/pdf",
		Content: []byte(strings.Repeat("%PDF-1.4 binary-ish content \x00\xff ", 1<<20/16)[:1<<20])}}
	var buf []byte
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = provider.AppendMIME(buf[:0], m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSMTPSend sends over one persistent loopback connection to the SMTP sink.
func BenchmarkSMTPSend(b *testing.B) {
	s := sink.NewSMTP(sink.SMTPOptions{})
	addr, err := s.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	host, port, _ := net.SplitHostPort(addr)
	portNum, _ := strconv.Atoi(port)
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: "none", Conns: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	m := benchMessage()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Send(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTPSend posts distinct keys to the HTTP sink over loopback.
func BenchmarkHTTPSend(b *testing.B) {
	srv := httptest.NewServer(sink.NewHTTP(sink.HTTPOptions{}))
	defer srv.Close()
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	m := benchMessage()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		m.JobID = "campaign:1:" + strconv.Itoa(i)
		if _, err := p.Send(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
}
