package segment_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/segment"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// engagementFixture: campaign x sent to subscribers 0-5 (5's send failed), campaign
// y sent to 6; subscriber 7 was sent nothing.
//
//	0: opened x (a person)          1: x opened by a scanner only
//	2: clicked x (a person)         3: clicked x's honeypot link only
//	4: opened nothing               5: x failed, so never received it
//	6: opened y 40 days ago         7: never sent anything
type engagementFixture struct {
	fixture
	subs []int64
	x, y int64
}

func newEngagementFixture(t *testing.T) engagementFixture {
	f := engagementFixture{fixture: setup(t, 0)}
	for i := range 8 {
		f.subs = append(f.subs, f.subscriber(i, map[string]any{}))
	}
	campaign := func(name string) int64 {
		return f.make.Campaign(t, f.acct, testfactory.Campaign{Name: name})
	}
	f.x, f.y = campaign("x"), campaign("y")
	send := func(campaign int64, i int, status string, daysAgo int) int64 {
		s := testfactory.Send{Email: fmt.Sprintf("s%d@example.com", i), JobID: fmt.Sprintf("t:%d:%d", campaign, i),
			Status: status}
		if status == "sent" {
			at := time.Now().AddDate(0, 0, -daysAgo)
			s.SentAt = &at
		}
		return f.make.Send(t, f.acct, campaign, f.subs[i], s)
	}
	hit := func(campaign, send int64, kind string, link int32, bot bool, daysAgo int) {
		f.make.TrackingHit(t, f.acct, campaign, send, testfactory.TrackingHit{Kind: kind, Link: link,
			At: time.Now().AddDate(0, 0, -daysAgo), SuspectedBot: bot})
	}
	s := make([]int64, 7)
	for i := range 5 {
		s[i] = send(f.x, i, "sent", 2)
	}
	s[5] = send(f.x, 5, "failed", 0)
	s[6] = send(f.y, 6, "sent", 41)
	hit(f.x, s[0], "open", 0, false, 1)
	hit(f.x, s[1], "open", 0, true, 1)
	hit(f.x, s[2], "click", 1, false, 1)
	hit(f.x, s[3], "click", 0, false, 1) // the honeypot: not a click
	hit(f.y, s[6], "open", 0, false, 40)
	return f
}

func ptr[T any](v T) *T { return &v }

// TestEngagementConditions: each engagement form selects the documented people,
// in the preview (count and sample) and in subscriber_in_segment alike.
func TestEngagementConditions(t *testing.T) {
	t.Parallel()
	f := newEngagementFixture(t)
	ctx := context.Background()
	cases := []struct {
		name string
		e    segment.Engagement
		want []int
	}{
		{"opened x by people", segment.Engagement{Kind: "opened", CampaignID: &f.x, PeopleOnly: true}, []int{0}},
		{"opened x by anyone", segment.Engagement{Kind: "opened", CampaignID: &f.x}, []int{0, 1}},
		{"not opened x by people", segment.Engagement{Kind: "opened", Negated: true, CampaignID: &f.x, PeopleOnly: true}, []int{1, 2, 3, 4}},
		{"not opened x by anyone", segment.Engagement{Kind: "opened", Negated: true, CampaignID: &f.x}, []int{2, 3, 4}},
		{"clicked x", segment.Engagement{Kind: "clicked", CampaignID: &f.x}, []int{2}},
		{"not clicked x", segment.Engagement{Kind: "clicked", Negated: true, CampaignID: &f.x}, []int{0, 1, 3, 4}},
		{"opened y", segment.Engagement{Kind: "opened", CampaignID: &f.y, PeopleOnly: true}, []int{6}},
		{"opened within 30 days", segment.Engagement{Kind: "opened", Days: ptr[int32](30), PeopleOnly: true}, []int{0}},
		{"opened within 45 days", segment.Engagement{Kind: "opened", Days: ptr[int32](45)}, []int{0, 1, 6}},
		{"not opened within 30 days", segment.Engagement{Kind: "opened", Negated: true, Days: ptr[int32](30), PeopleOnly: true}, []int{1, 2, 3, 4}},
		{"not opened within 45 days", segment.Engagement{Kind: "opened", Negated: true, Days: ptr[int32](45), PeopleOnly: true}, []int{1, 2, 3, 4}},
		{"clicked within 2 days", segment.Engagement{Kind: "clicked", Days: ptr[int32](2), PeopleOnly: true}, []int{2}},
	}
	for i, c := range cases {
		var want []int64
		for _, w := range c.want {
			want = append(want, f.subs[w])
		}
		e := c.e
		fl := segment.Filter{Engagement: &e}
		n, sample, err := f.svc.Preview(ctx, f.acct, fl, 100)
		require.NoError(t, err, c.name)
		var got []int64
		for _, s := range sample {
			got = append(got, s.ID)
		}
		require.Equal(t, want, got, c.name)
		require.Equal(t, int64(len(want)), n, c.name)

		seg, err := f.svc.Create(ctx, f.acct, fmt.Sprintf("seg %d", i), fl)
		require.NoError(t, err, c.name)
		require.Equal(t, &e, seg.Engagement, "%s: stored as given", c.name)
		var in []int64
		for _, sub := range f.subs {
			var ok bool
			require.NoError(t, f.pool.QueryRow(ctx, `SELECT subscriber_in_segment($1, $2, $3)`, f.acct, seg.ID, sub).Scan(&ok))
			if ok {
				in = append(in, sub)
			}
		}
		require.True(t, slices.Equal(want, in), "%s: subscriber_in_segment %v, want %v", c.name, in, want)
	}
}

// TestEngagementIsValidated: another account's campaign, an unknown one, no scope,
// both scopes, days out of bounds and an unknown kind are each a 422 naming the
// field, and nothing is stored.
func TestEngagementIsValidated(t *testing.T) {
	t.Parallel()
	f := newEngagementFixture(t)
	ctx := context.Background()
	other := f.make.Account(t, "b").ID
	theirs := f.make.Campaign(t, other, testfactory.Campaign{Name: "z"})
	cases := []struct {
		e       segment.Engagement
		pointer string
	}{
		{segment.Engagement{Kind: "opened", CampaignID: &theirs}, "/engagement/campaign_id"},
		{segment.Engagement{Kind: "opened", CampaignID: ptr(theirs + 1000)}, "/engagement/campaign_id"},
		{segment.Engagement{Kind: "opened"}, "/engagement/campaign_id"},
		{segment.Engagement{Kind: "opened", CampaignID: &f.x, Days: ptr[int32](3)}, "/engagement/within_days"},
		{segment.Engagement{Kind: "opened", Days: ptr[int32](0)}, "/engagement/within_days"},
		{segment.Engagement{Kind: "opened", Days: ptr[int32](segment.MaxEngagementDays + 1)}, "/engagement/within_days"},
		{segment.Engagement{Kind: "bounced", Days: ptr[int32](3)}, "/engagement/kind"},
	}
	for _, c := range cases {
		e := c.e
		_, err := f.svc.Create(ctx, f.acct, "bad", segment.Filter{Engagement: &e})
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae, "%+v", c.e)
		require.Equal(t, apperr.Invalid, ae.Code, "%+v", c.e)
		require.Equal(t, c.pointer, ae.Fields[0].Pointer, "%+v", c.e)
		_, _, err = f.svc.Preview(ctx, f.acct, segment.Filter{Engagement: &e}, 10)
		require.Equal(t, apperr.Invalid, apperr.CodeOf(err), "%+v: preview", c.e)
	}
	require.Zero(t, f.int64(`SELECT count(*) FROM segments`), "nothing stored")
}
