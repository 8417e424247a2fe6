package executor

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestResendToNonOpenersGoesToExactlyThoseOnce: a first campaign is sent; some
// recipients open it (people), some are opened by a scanner only, one only clicks;
// a subscriber joins the list afterwards. A second campaign on the segment "not
// opened the first, people only" goes to the recipients of the first who did not
// open it as a person (the scanner-only ones included), each exactly once, and to
// nobody the first was not sent to.
func TestResendToNonOpenersGoesToExactlyThoseOnce(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	f := fixture{t, pool}
	clk := newClock()
	acct := f.account("a")
	f.subscribers(acct, "s", 10, "confirmed")
	l := f.list(acct, "l")
	f.members(acct, l, "s")
	first := f.campaign(acct, []int64{l}, "skip", clk.Now())

	p := newFake(true)
	e := newExecutor(t, pool, p, Config{Now: clk.Now, Tick: 50 * time.Millisecond})
	runUntil(t, e)
	waitSent(t, f, e, first)
	require.Equal(t, map[string]int{"sent": 10}, f.counts(first))

	// s1..s3 opened as people (s3 twice, once more by a scanner); s4, s5 only by a
	// scanner; s6 clicked without opening; s7..s10 did nothing.
	fx := testfactory.New(pool)
	hit := func(email, kind string, link int32, bot bool) {
		send := f.int64(`SELECT id FROM sends WHERE campaign_id = $1 AND email_lower = $2`, first, email)
		fx.TrackingHit(t, acct, first, send, testfactory.TrackingHit{Kind: kind, Link: link, At: time.Now(), SuspectedBot: bot})
	}
	for _, s := range []string{"s1", "s2", "s3", "s3"} {
		hit(s+"@example.com", "open", 0, false)
	}
	hit("s3@example.com", "open", 0, true)
	hit("s4@example.com", "open", 0, true)
	hit("s5@example.com", "open", 0, true)
	hit("s6@example.com", "click", 1, false)
	// Joined after the first campaign: never received it, so not a non-opener.
	late := fx.Subscriber(t, acct, testfactory.Subscriber{Email: "late@example.com", Status: "confirmed"})
	fx.Members(t, acct, l, late)

	seg := fx.Segment(t, acct, testfactory.Segment{Name: "non-openers", EngagedKind: "open", EngagedNegated: true,
		EngagedCampaign: first})
	second := f.campaign(acct, []int64{l}, "skip", clk.Now())
	f.exec(`UPDATE campaigns SET segment_id = $1 WHERE id = $2`, seg, second)
	waitSent(t, f, e, second)

	var want []string
	for i := 4; i <= 10; i++ {
		want = append(want, fmt.Sprintf("s%d@example.com", i))
	}
	slices.Sort(want)
	rows, err := pool.Query(context.Background(), `SELECT email_lower FROM sends WHERE campaign_id = $1 AND status = 'sent' ORDER BY email_lower`, second)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		got = append(got, s)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, want, got)
	require.Equal(t, map[string]int{"sent": len(want)}, f.counts(second))
	// What the provider accepted for the second campaign: each non-opener once.
	_, accepted, order := p.snapshot()
	prefix := fmt.Sprintf("campaign:%d:", second)
	var toSecond []string
	for _, m := range order {
		if strings.HasPrefix(m.JobID, prefix) {
			require.Equal(t, 1, accepted[m.JobID], m.JobID)
			toSecond = append(toSecond, m.To)
		}
	}
	slices.Sort(toSecond)
	require.Equal(t, want, toSecond, "each non-opener accepted exactly once")
}
