package campaign_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/layout"
)

// A campaign's own Markdown is composed in its layout while it is a draft, follows
// an edit of the layout, and is pinned when approved: a later edit of the layout
// does not reach it. Bad content is a 422 naming the field, and changes nothing.
func TestMarkdownCampaignPinnedAtApproval(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	other, _, err := account.NewService(pool).Create(ctx, "b")
	require.NoError(t, err)
	layouts, s := layout.NewService(pool), campaign.NewService(pool)
	l, err := layouts.Create(ctx, acc.ID, layout.Fields{Name: str("l"), HTML: str(`<div id="v1">{{content}}</div>`)})
	require.NoError(t, err)
	theirs, err := layouts.Create(ctx, other.ID, layout.Fields{Name: str("l"), HTML: str(`<div>{{content}}</div>`)})
	require.NoError(t, err)

	c, err := s.Create(ctx, acc.ID, campaign.Fields{Name: str("c"), Subject: str("s"), FromEmail: str("a@example.com"),
		ContentType: str("markdown"), Markdown: str("Hi **{{.Name}}**"), LayoutID: &l.ID})
	require.NoError(t, err)
	require.Equal(t, "markdown", c.ContentType)
	require.Equal(t, "<div id=\"v1\"><p>Hi <strong>{{.Name}}</strong></p>\n</div>", c.HTMLTemplate)
	require.Equal(t, "Hi {{.Name}}\n", c.TextTemplate)

	_, err = layouts.Update(ctx, acc.ID, l.ID, layout.Fields{HTML: str(`<div id="v2">{{content}}</div>`)})
	require.NoError(t, err)
	c, err = s.Get(ctx, acc.ID, c.ID)
	require.NoError(t, err)
	require.Contains(t, c.HTMLTemplate, `id="v2"`, "a draft follows its layout")

	c, err = s.Update(ctx, acc.ID, c.ID, campaign.Fields{Markdown: str("# Bye {{.Name}}")})
	require.NoError(t, err)
	require.Equal(t, "<div id=\"v2\"><h1>Bye {{.Name}}</h1>\n</div>", c.HTMLTemplate)

	_, err = s.Approve(ctx, acc.ID, c.ID, nil)
	require.NoError(t, err)
	_, err = layouts.Update(ctx, acc.ID, l.ID, layout.Fields{HTML: str(`<div id="v3">{{content}}</div>`)})
	require.NoError(t, err)
	c, err = s.Get(ctx, acc.ID, c.ID)
	require.NoError(t, err)
	require.Equal(t, "<div id=\"v2\"><h1>Bye {{.Name}}</h1>\n</div>", c.HTMLTemplate, "approval pinned it")

	for _, tc := range []struct {
		f       campaign.Fields
		pointer string
	}{
		{campaign.Fields{ContentType: str("markdown"), Markdown: str("x"), HTMLTemplate: str("<p>x</p>")}, "/html_template"},
		{campaign.Fields{ContentType: str("markdown"), Markdown: str("x"), LayoutID: &theirs.ID}, "/layout_id"},
		{campaign.Fields{ContentType: str("markdown"), Markdown: str("x {{.Nope}}")}, "/markdown"},
		{campaign.Fields{ContentType: str("markdown")}, "/markdown"},
		{campaign.Fields{Subject: str("s"), TextTemplate: str("x"), LayoutID: &l.ID}, "/layout_id"},
	} {
		tc.f.Name, tc.f.FromEmail = str("bad"), str("a@example.com")
		if tc.f.Subject == nil {
			tc.f.Subject = str("s")
		}
		_, err := s.Create(ctx, acc.ID, tc.f)
		var e *apperr.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, apperr.Invalid, e.Code, "%v", err)
		require.Equal(t, tc.pointer, e.Fields[0].Pointer, "%v", err)
	}
	list, err := s.List(ctx, acc.ID, 0, nil, 10)
	require.NoError(t, err)
	require.Len(t, list, 1, "nothing stored")
}
