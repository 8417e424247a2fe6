package sink

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Command is `sendonce-harness sink`: it serves a fake provider out of process, for
// `sendonce bench --provider smtp --sink HOST:PORT` and manual runs:
//
//	sendonce-harness sink http --addr 127.0.0.1:PORT [--latency 2ms] [--fail-rate 0.01] [--drop-rate 0.01]
//	sendonce-harness sink smtp --addr 127.0.0.1:PORT --stats-addr 127.0.0.1:PORT [--latency 2ms] [...]
//
// Once listening it prints one line, `sink <kind> addr=<host:port> stats=<url>`;
// the stats URL answers GET with the counters as JSON. On SIGTERM or SIGINT it
// prints the final counters as one JSON line and exits 0.
func Command(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) < 1 || (args[0] != "http" && args[0] != "smtp") {
		return errors.New("usage: sendonce-harness sink http|smtp --addr 127.0.0.1:PORT [--stats-addr ADDR] [--latency D]")
	}
	kind := args[0]
	fs := flag.NewFlagSet("sink "+kind, flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	statsAddr := fs.String("stats-addr", "127.0.0.1:0", "smtp only: HTTP address serving GET /stats")
	latency := fs.Duration("latency", 0, "added to every delivery before it is answered")
	failRate := fs.Float64("fail-rate", 0, "fraction answered with a temporary failure (http 503, smtp 451)")
	dropRate := fs.Float64("drop-rate", 0, "fraction accepted and then answered by dropping the connection")
	permRate := fs.Float64("perm-rate", 0, "smtp only: fraction of recipients refused with 550")
	seed := fs.Uint64("seed", 1, "seed of the injected failures")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}

	var final func() any
	var closeSink func() error
	switch kind {
	case "http":
		s := NewHTTP(HTTPOptions{Latency: *latency, FailRate: *failRate, DropRate: *dropRate, Seed: *seed})
		url, err := s.Listen(*addr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "sink http addr=%s stats=%s/stats\n", url[len("http://"):], url)
		final, closeSink = func() any { return s.Stats() }, s.Close
	case "smtp":
		s := NewSMTP(SMTPOptions{Latency: *latency, TempRate: *failRate, PermRate: *permRate,
			DropRate: *dropRate, Seed: *seed})
		smtpAddr, err := s.Listen(*addr)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", *statsAddr)
		if err != nil {
			s.Close()
			return err
		}
		srv := &http.Server{Handler: s.StatsHandler(), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln) //nolint:errcheck // ends on Close
		fmt.Fprintf(stdout, "sink smtp addr=%s stats=http://%s/stats\n", smtpAddr, ln.Addr())
		final = func() any { return s.Stats() }
		closeSink = func() error { return errors.Join(srv.Close(), s.Close()) }
	}
	<-ctx.Done()
	err := closeSink()
	b, jerr := json.Marshal(final())
	if jerr != nil {
		return jerr
	}
	fmt.Fprintf(stdout, "%s\n", b)
	return err
}
