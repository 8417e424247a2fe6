package sink_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// startSinkCommand runs `sendonce-harness sink <args>` and returns the addr and stats URL it
// printed, and a stop function returning the final JSON line.
func startSinkCommand(t *testing.T, args ...string) (addr, stats string, stop func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- sink.Command(ctx, args, w)
		w.Close()
	}()
	lines := bufio.NewScanner(r)
	require.True(t, lines.Scan())
	for _, f := range strings.Fields(lines.Text()) {
		if v, ok := strings.CutPrefix(f, "addr="); ok {
			addr = v
		}
		if v, ok := strings.CutPrefix(f, "stats="); ok {
			stats = strings.TrimSuffix(v, "/stats")
		}
	}
	require.NotEmpty(t, addr)
	require.NotEmpty(t, stats)
	return addr, stats, func() string {
		cancel()
		require.True(t, lines.Scan())
		require.NoError(t, <-done)
		return lines.Text()
	}
}

func TestSinkCommandHTTP(t *testing.T) {
	t.Parallel()
	addr, stats, stop := startSinkCommand(t, "http", "--addr", "127.0.0.1:0", "--latency", "1ms")
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: "http://" + addr + "/send"})
	require.NoError(t, err)
	m := provider.Message{JobID: "campaign:1:1", From: "a@example.com", To: "b@example.com"}
	for range 2 {
		_, err = p.Send(context.Background(), m)
		require.NoError(t, err)
	}
	st, err := sink.FetchHTTPStats(context.Background(), stats)
	require.NoError(t, err)
	require.Equal(t, sink.HTTPStats{RawAttempts: 2, Unique: 1, Replays: 1}, st)
	var final sink.HTTPStats
	require.NoError(t, json.Unmarshal([]byte(stop()), &final))
	require.Equal(t, st, final)
}

func TestSinkCommandSMTP(t *testing.T) {
	t.Parallel()
	addr, stats, stop := startSinkCommand(t, "smtp", "--addr", "127.0.0.1:0", "--stats-addr", "127.0.0.1:0")
	host, port, _ := strings.Cut(addr, ":")
	portNum, _ := strconv.Atoi(port)
	p, err := provider.NewSMTP(provider.SMTPSettings{Host: host, Port: portNum, Security: "none"})
	require.NoError(t, err)
	defer p.Close()
	m := provider.Message{JobID: "campaign:1:1", MessageID: "campaign.1.1@example.com",
		From: "a@example.com", To: "b@example.com", Text: "hi"}
	_, err = p.Send(context.Background(), m)
	require.NoError(t, err)
	st, err := sink.FetchSMTPStats(context.Background(), stats)
	require.NoError(t, err)
	require.EqualValues(t, 1, st.Unique)
	require.Equal(t, map[int]int64{1: 1}, st.PerMessageID)
	require.Contains(t, stop(), `"unique":1`)
}
