package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthcheck asks the API of this container for /healthz and fails unless it
// answers 200. The image has no shell and no curl, so Docker's HEALTHCHECK and
// compose's healthcheck run the binary itself. The address is the first
// argument, or SENDONCE_ADDR with an unspecified host read as loopback.
func healthcheck(ctx context.Context, addr string, args []string, stdout io.Writer) error {
	url, err := healthURL(addr, args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	fmt.Fprintf(stdout, "healthcheck: %s ok\n", url)
	return nil
}

// healthURL builds the URL to probe: an explicit http(s) URL is used as given, a
// host:port gets /healthz; 0.0.0.0, :: or an empty host mean this machine.
func healthURL(addr string, args []string) (string, error) {
	if len(args) > 1 {
		return "", fmt.Errorf("usage: sendonce healthcheck [URL or host:port]")
	}
	if len(args) == 1 {
		if strings.HasPrefix(args[0], "http://") || strings.HasPrefix(args[0], "https://") {
			return args[0], nil
		}
		addr = args[0]
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("healthcheck: address %q: %w", addr, err)
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}
