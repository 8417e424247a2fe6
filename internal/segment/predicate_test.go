package segment_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/segment"
)

// The queries over a set of subscribers (the campaign build, the preview) carry a
// segment's filter inline, over their parameters, where the planner can use the
// attributes index for it. They must all say the same thing; the per-subscriber
// checks call subscriber_in_segment instead of a copy.
var inlinePredicateAt = map[string]int{
	"campaigns.sql:CampaignAudiencePage":       1,
	"segments.sql:SegmentPreviewCount":         1,
	"segments.sql:SegmentPreviewSample":        1,
	"segments.sql:SegmentPreviewCountInLists":  1,
	"segments.sql:SegmentPreviewSampleInLists": 1,
}

var (
	queryName = regexp.MustCompile(`(?m)^-- name: (\w+)`)
	// From the jsonpath test to the created_before bound: the segment's filter.
	inlinePredicate = regexp.MustCompile(`(?s)AND \(sqlc\.narg\('segment_match'\).*?sqlc\.narg\('segment_created_before'\)::timestamptz\)`)
	spaces          = regexp.MustCompile(`\s+`)
)

func TestSegmentPredicateHasOneText(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../db/queries/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	found := map[string]int{}
	var texts []string
	for _, path := range files {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		src := string(raw)
		// The per-subscriber form over a segments row has no copy left in a query.
		require.False(t, strings.Contains(src, "ANY(g.list_ids)"), "%s: a copy of the segment's filter; call subscriber_in_segment", path)
		names := queryName.FindAllStringSubmatchIndex(src, -1)
		for i, n := range names {
			end := len(src)
			if i+1 < len(names) {
				end = names[i+1][0]
			}
			for _, p := range inlinePredicate.FindAllString(src[n[0]:end], -1) {
				found[filepath.Base(path)+":"+src[n[2]:n[3]]]++
				texts = append(texts, spaces.ReplaceAllString(p, " "))
			}
		}
	}
	require.Equal(t, inlinePredicateAt, found, "where the set forms carry the segment's filter")
	for i, text := range texts {
		require.Equal(t, texts[0], text, "copy %d of the segment predicate differs", i)
	}
	// The engagement condition is part of the one text (and of subscriber_in_segment,
	// which TestEngagementConditions holds to the preview).
	require.Contains(t, texts[0], "sqlc.narg('segment_engaged')::text IS NULL", "the engagement condition")
	require.Contains(t, texts[0], "JOIN tracking_hits h", "the engagement condition")
}

// TestSubscriberInSegmentAgreesWithPreview: the function the sequences call and the
// inline predicate of the preview (so of the build, by the text test) put the same
// subscribers in each segment.
func TestSubscriberInSegmentAgreesWithPreview(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	subs := []int64{
		f.subscriber(1, map[string]any{"plan": "pro", "seats": 10}),
		f.subscriber(2, map[string]any{"plan": "pro"}),
		f.subscriber(3, map[string]any{"plan": "free", "seats": "many"}),
		f.subscriber(4, map[string]any{}),
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := f.pool.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	exec(`UPDATE subscribers SET status = 'pending' WHERE id = $1`, subs[2])
	exec(`UPDATE subscribers SET status = 'unsubscribed' WHERE id = $1`, subs[3])
	exec(`UPDATE subscribers SET created_at = '2020-01-01' WHERE id = $1`, subs[0])
	l1, l2 := f.make.List(t, f.acct, "l1"), f.make.List(t, f.acct, "l2")
	f.make.Members(t, f.acct, l1, subs[0], subs[1])
	f.make.Members(t, f.acct, l2, subs[1])
	exec(`UPDATE list_members SET status = 'unsubscribed' WHERE subscriber_id = $1 AND list_id = $2`, subs[1], l1)

	cut := time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)
	filters := []segment.Filter{
		{},
		{Match: `$.plan == "pro"`},
		{Match: `$.seats > 5`}, // a string seats is an error inside @@: no match, not a failure
		{Statuses: []string{"confirmed", "pending"}},
		{ListIDs: []int64{l1}},
		{ListIDs: []int64{l1, l2}},
		{CreatedBefore: &cut},
		{CreatedAfter: &cut, Statuses: []string{"confirmed"}},
		{Match: `$.plan == "pro"`, ListIDs: []int64{l1}, CreatedBefore: &cut},
	}
	other := f.make.Account(t, "b").ID
	for i, fl := range filters {
		seg, err := f.svc.Create(ctx, f.acct, "s"+strings.Repeat("x", i), fl)
		require.NoError(t, err)
		_, sample, err := f.svc.Preview(ctx, f.acct, fl, len(subs))
		require.NoError(t, err)
		var want []int64
		for _, s := range sample {
			want = append(want, s.ID)
		}
		var got []int64
		for _, sub := range subs {
			var in, elsewhere bool
			require.NoError(t, f.pool.QueryRow(ctx, `SELECT subscriber_in_segment($1, $2, $3)`, f.acct, seg.ID, sub).Scan(&in))
			require.NoError(t, f.pool.QueryRow(ctx, `SELECT subscriber_in_segment($1, $2, $3)`, other, seg.ID, sub).Scan(&elsewhere))
			require.False(t, elsewhere, "another account's segment matches nobody")
			if in {
				got = append(got, sub)
			}
		}
		require.True(t, slices.Equal(want, got), "filter %d %+v: preview %v, subscriber_in_segment %v", i, fl, want, got)
	}
}
