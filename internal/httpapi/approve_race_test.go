package httpapi_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dnscheck/dnschecktest"
)

// hookedDNS answers TXT queries from zone; before answering, the first query
// after a hook is set runs it (and clears it): the test's way to commit an edit
// exactly while a check is waiting on DNS.
func hookedDNS(t *testing.T, zone map[string][]string) (addr string, setHook func(func())) {
	t.Helper()
	var (
		mu   sync.Mutex
		hook func()
	)
	addr = dnschecktest.Serve(t, zone, func(string) {
		mu.Lock()
		h := hook
		hook = nil
		mu.Unlock()
		if h != nil {
			h()
		}
	})
	return addr, func(h func()) { mu.Lock(); hook = h; mu.Unlock() }
}

// The approval's domain check runs before the approve transaction (DNS is never
// looked up inside one). A PATCH of from_email committed while the check waits on
// DNS must not get the new, unchecked From approved: the approval is a 409 and
// the campaign stays a draft. The edit is made from inside the DNS server, so the
// interleaving is the same on every run.
func TestApproveRefusesFromEditedDuringCheck(t *testing.T) {
	t.Parallel()
	addr, setHook := hookedDNS(t, testZone)
	for _, mode := range []string{"warn", "refuse"} {
		e := setup(t, func(c *config.Config) { c.DNSServer, c.DomainCheck = addr, mode })
		res := e.do(e.keyA, "POST", "/v1/senders", map[string]any{"name": "r", "type": "resend",
			"credentials": map[string]any{"api_key": "re_123456789"}, "default": true})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		res = e.do(e.keyA, "POST", "/v1/campaigns", map[string]any{"name": "c", "subject": "s", "from_email": "news@good.com", "text_template": "hi"})
		require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
		id := itoa(decodeAs[api.Campaign](t, res).Id)
		var edited atomic.Bool
		setHook(func() {
			res := e.do(e.keyA, "PATCH", "/v1/campaigns/"+id, map[string]any{"from_email": "ceo@bad.com"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			edited.Store(true)
		})
		res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/approve", nil)
		require.True(t, edited.Load(), "the edit was made during the check")
		require.Equal(t, http.StatusConflict, res.Status, "%s: %s", mode, res.Body)
		require.Contains(t, string(res.Body), "from_email")
		res = e.do(e.keyA, "GET", "/v1/campaigns/"+id, nil)
		got := decodeAs[api.Campaign](t, res)
		require.Equal(t, api.CampaignStatus("draft"), got.Status)
		require.Equal(t, "ceo@bad.com", got.FromEmail)

		// Approved again, the new From is the one checked.
		res = e.do(e.keyA, "POST", "/v1/campaigns/"+id+"/approve", nil)
		if mode == "refuse" {
			require.Equal(t, http.StatusUnprocessableEntity, res.Status, "bad.com fails: %s", res.Body)
			continue
		}
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		require.Equal(t, "bad.com", decodeAs[api.Campaign](t, res).DomainCheck.Domain)
	}
}
