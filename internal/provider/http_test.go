package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/sink"
)

// testMessage is a campaign message as internal/render builds one (the Message-ID
// here is readable test data; real ones are keyed).
func testMessage(job string) provider.Message {
	return provider.Message{
		JobID: job, MessageID: strings.ReplaceAll(job, ":", ".") + "@example.com",
		From: "news@example.com", FromName: "Example News", ReplyTo: "help@example.com",
		To: "ada@example.org", ToName: "Ada Lovelace",
		Subject: "Hello Ada", HTML: "<p>Hello <b>Ada</b></p>", Text: "Hello Ada",
		Headers: []provider.Header{
			{Name: "List-Unsubscribe", Value: "<https://x.test/u/TOKEN>, <mailto:unsub@example.com?subject=unsubscribe>"},
			{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
		},
	}
}

func TestHTTPSendsAndDeduplicates(t *testing.T) {
	t.Parallel()
	s := sink.NewHTTP(sink.HTTPOptions{KeepDeliveries: true})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL + "/send", Authorization: "Bearer k"})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	require.True(t, p.Idempotent())

	m := testMessage("campaign:1:2")
	id, err := p.Send(context.Background(), m)
	require.NoError(t, err)
	require.Equal(t, "sink-campaign:1:2", id)
	// A replay with the same job id is answered with the first result, not delivered again.
	id2, err := p.Send(context.Background(), m)
	require.NoError(t, err)
	require.Equal(t, id, id2)
	require.Equal(t, sink.HTTPStats{RawAttempts: 2, Unique: 1, Replays: 1}, s.Stats())

	d := s.Deliveries()["campaign:1:2"]
	require.Equal(t, "campaign:1:2", d.Header.Get("Idempotency-Key"))
	require.Equal(t, "Bearer k", d.Header.Get("Authorization"))
	var body provider.HTTPPayload
	require.NoError(t, json.Unmarshal(d.Body, &body))
	require.Equal(t, "campaign.1.2@example.com", body.MessageID)
	require.Equal(t, "ada@example.org", body.To)
	require.Equal(t, "Example News", body.FromName)
	require.Equal(t, "<https://x.test/u/TOKEN>, <mailto:unsub@example.com?subject=unsubscribe>", body.Headers["List-Unsubscribe"])
	require.Equal(t, "List-Unsubscribe=One-Click", body.Headers["List-Unsubscribe-Post"])

	st, err := sink.FetchHTTPStats(context.Background(), srv.URL)
	require.NoError(t, err)
	require.Equal(t, s.Stats(), st)
}

func TestHTTPConcurrentSameKeyDeliversOnce(t *testing.T) {
	t.Parallel()
	s := sink.NewHTTP(sink.HTTPOptions{Latency: 20 * time.Millisecond})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL})
	require.NoError(t, err)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := p.Send(context.Background(), testMessage("campaign:1:9"))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			// The only refusal is "in progress", which must be retried later.
			require.Equal(t, provider.Temporary, provider.ClassOf(err), "%v", err)
		}
	}
	st := s.Stats()
	require.EqualValues(t, 1, st.Unique)
	require.Zero(t, st.Duplicates)
	require.EqualValues(t, 8, st.RawAttempts)
}

func TestHTTPClassifiesStatuses(t *testing.T) {
	t.Parallel()
	for code, want := range map[int]provider.Class{
		400: provider.Permanent, 422: provider.Permanent, 413: provider.Permanent,
		409: provider.Temporary, 429: provider.Temporary, 503: provider.Temporary, 408: provider.Temporary,
		401: provider.Temporary, 403: provider.Temporary, 302: provider.Temporary,
		500: provider.Ambiguous, 502: provider.Ambiguous, 504: provider.Ambiguous,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			fmt.Fprint(w, `{"error":"nope"}`)
		}))
		p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL})
		require.NoError(t, err)
		_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
		srv.Close()
		require.Error(t, err)
		require.Equal(t, want, provider.ClassOf(err), "status %d", code)
		var pe *provider.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, code, pe.Code)
		// 401 and 403 refuse the sender's credentials, not this message: counted
		// against the sender, as the native adapters' are.
		require.Equal(t, code == 401 || code == 403, pe.Config, "status %d", code)
	}
}

func TestHTTPInjectedFailureIsTemporary(t *testing.T) {
	t.Parallel()
	s := sink.NewHTTP(sink.HTTPOptions{FailRate: 1})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL})
	require.NoError(t, err)
	_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
	require.Equal(t, provider.Temporary, provider.ClassOf(err))
	require.Zero(t, s.Stats().Unique)
}

func TestHTTPDroppedAfterAcceptIsAmbiguousAndReplayDeduplicates(t *testing.T) {
	t.Parallel()
	s := sink.NewHTTP(sink.HTTPOptions{DropRate: 1})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL})
	require.NoError(t, err)
	m := testMessage("campaign:3:4")
	_, err = p.Send(context.Background(), m)
	require.Equal(t, provider.Ambiguous, provider.ClassOf(err), "%v", err)
	// Asked again with the same key, the sink replays its first result.
	id, err := p.Send(context.Background(), m)
	require.NoError(t, err)
	require.Equal(t, "sink-campaign:3:4", id)
	st := s.Stats()
	require.EqualValues(t, 1, st.Unique)
	require.Zero(t, st.Duplicates)
}

func TestHTTPTimeoutAfterWriteIsAmbiguous(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	// The deadline must fall after the request is written: 50 ms was at times
	// spent dialling and writing on a loaded machine (then the timeout is, rightly,
	// Temporary). Two seconds is forty times what that took at worst.
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL, Timeout: 2 * time.Second})
	require.NoError(t, err)
	_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
	require.Equal(t, provider.Ambiguous, provider.ClassOf(err), "%v", err)
}

func TestHTTPConnectionRefusedIsTemporary(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	p, err := provider.NewHTTP(provider.HTTPSettings{URL: url})
	require.NoError(t, err)
	_, err = p.Send(context.Background(), testMessage("campaign:1:2"))
	require.Equal(t, provider.Temporary, provider.ClassOf(err), "%v", err)
}

func TestHTTPProviderIDFromBody(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"id":"abc"}`: "abc", `{"message_id":"m-1"}`: "m-1", `{"id":12345678}`: "12345678",
		`not json`: "campaign:1:2", ``: "campaign:1:2",
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, body)
		}))
		p, err := provider.NewHTTP(provider.HTTPSettings{URL: srv.URL})
		require.NoError(t, err)
		id, err := p.Send(context.Background(), testMessage("campaign:1:2"))
		srv.Close()
		require.NoError(t, err)
		require.Equal(t, want, id, body)
	}
}
