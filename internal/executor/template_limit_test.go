package executor

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTemplateLimitAtSendFailsTheRowForGood: a template that passes the save-time
// check but runs into a limit with one recipient's data (here nested ranges over
// a 1,000-element attribute) fails that row permanently, with the reason, and the
// provider never sees it; a recipient whose data stays within the limits is sent.
func TestTemplateLimitAtSendFailsTheRowForGood(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(true)
	f, e, c := started(t, 2, "skip", p, clk)
	f.exec(`UPDATE campaigns SET text_template = '{{with .Attributes.l}}{{range .}}{{range $.Attributes.l}}{{end}}{{end}}{{end}}x',
	        html_template = '' WHERE id = $1`, c.ID)
	list := "[" + strings.TrimSuffix(strings.Repeat("1,", 1000), ",") + "]"
	f.exec(`UPDATE subscribers SET attributes = jsonb_build_object('l', $1::jsonb)
	        WHERE id = (SELECT min(subscriber_id) FROM sends WHERE campaign_id = $2)`, list, c.ID)
	c = sendingCampaign(t, e, c.ID)
	require.NoError(t, c.tmplErr, "the template itself is within the limits")

	heavy := outcome(t, e, c)
	got := readSend(t, f.pool, heavy.ID)
	require.Equal(t, "failed", got.Status)
	require.Contains(t, got.LastError, "text template runs more than")
	require.Equal(t, 1, got.Attempts, "failed at once, not retried")

	light := outcome(t, e, c)
	require.Equal(t, "sent", readSend(t, f.pool, light.ID).Status)
	calls, _, _ := p.snapshot()
	require.Len(t, calls, 1)
	require.Contains(t, calls, light.JobID)
}
