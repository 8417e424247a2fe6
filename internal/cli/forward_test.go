package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/servicetest"
)

// events forward POSTs live events to a receiver, signed so that the SDK's
// Verify (the Standard Webhooks check receivers run) accepts them.
func TestCLIEventsForward(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t)
	sdk, err := client.New(client.Config{URL: svc.URL, APIKey: svc.APIKey})
	require.NoError(t, err)
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

	got := make(chan client.Event, 16)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := client.Verify(r.Header, body, time.Now(), secret); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var ev client.Event
		if json.Unmarshal(body, &ev) != nil || r.Header.Get("webhook-id") != ev.Id {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		got <- ev
	}))
	defer recv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, servicetest.Binary(), "events", "forward", "--to", recv.URL, "--secret", secret,
		"--type", "suppression.created")
	cmd.Env = append(servicetest.CleanEnv(), "SENDONCE_URL="+svc.URL, "SENDONCE_API_KEY="+svc.APIKey)
	require.NoError(t, cmd.Start())

	// The stream starts "now", once connected: add suppressions until one arrives.
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		resp, err := sdk.AddSuppressionWithResponse(ctx, nil, client.SuppressionCreate{Email: fmt.Sprintf("f%d@example.com", i)})
		require.NoError(t, client.Check(resp, err))
		select {
		case ev := <-got:
			require.Equal(t, client.EventType("suppression.created"), ev.Type)
			require.NotEmpty(t, ev.Id)
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			require.NoError(t, cmd.Wait(), "interrupted, forward exits 0")
			return
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("no event forwarded")
		}
	}
}
