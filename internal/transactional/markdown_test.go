package transactional_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/executor"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/transactional"
)

func ptr[T any](v T) *T { return &v }

// fieldOf is the pointer of the single field an error names.
func fieldOf(t *testing.T, err error) string {
	t.Helper()
	var e *apperr.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, apperr.Invalid, e.Code, "%v", err)
	require.Len(t, e.Fields, 1, "%v", err)
	return e.Fields[0].Pointer
}

// A message sent with Markdown goes out with the HTML converted from it inside
// the layout it names (or the account's default), a text part, and its template
// actions rendered for the recipient; a retry under its key answers the same
// message, another Markdown under the key is refused.
func TestMarkdownMessageSentInItsLayout(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	ls := layout.NewService(e.pool)
	_, err := ls.Create(ctx, e.account, layout.Fields{Name: ptr("house"), Default: ptr(true),
		HTML: ptr(`<html><body><div class="house">{{content}}</div></body></html>`), Text: ptr("HOUSE\n{{content}}\n-- bye")})
	require.NoError(t, err)
	named, err := ls.Create(ctx, e.account, layout.Fields{Name: ptr("promo"),
		HTML: ptr(`<html><body><div class="promo">{{content}}</div></body></html>`)})
	require.NoError(t, err)

	rec := &recorder{calls: map[string]int{}}
	e.start(t, rec, executor.Config{Workers: 1, BatchSize: 2, Tick: time.Second, Poll: 50 * time.Millisecond},
		func() map[string]int { c, _ := rec.snapshot(); return c })

	md := "# Order {{.Attributes.order}}\n\nThanks **{{.Name}}**!\n\n{{if .Attributes.gift}}- a gift{{end}}\n"
	req := transactional.Request{To: "ada@example.com", ToName: "Ada", From: "shop@example.com",
		Subject: ptr("Receipt {{.Attributes.order}}"), Markdown: &md, Data: []byte(`{"order":"A-7","gift":true}`)}
	first, created, err := e.svc.Send(ctx, e.account, "md-1", req)
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := e.svc.Send(ctx, e.account, "md-1", req)
	require.NoError(t, err, "the retry")
	require.False(t, created)
	require.Equal(t, first.ID, again.ID)
	other := req
	other.Markdown = ptr("# Another")
	_, _, err = e.svc.Send(ctx, e.account, "md-1", other)
	require.ErrorContains(t, err, "Idempotency-Key was used for another message")
	withLayout := req
	withLayout.LayoutID = &named.ID
	_, _, err = e.svc.Send(ctx, e.account, "md-1", withLayout)
	require.ErrorContains(t, err, "Idempotency-Key was used for another message", "layout_id is in the fingerprint")

	second, _, err := e.svc.Send(ctx, e.account, "md-2", withLayout)
	require.NoError(t, err)

	for _, id := range []int64{first.ID, second.ID} {
		require.Equal(t, "sent", e.waitStatus(t, id).Status)
	}
	_, sent := rec.snapshot()
	require.Len(t, sent, 2)
	byJob := map[string]int{}
	for i, m := range sent {
		byJob[m.JobID] = i
	}
	m := sent[byJob[transactional.JobID(e.account, "md-1")]]
	require.Equal(t, "Receipt A-7", m.Subject)
	require.Contains(t, m.HTML, `<div class="house">`)
	require.Contains(t, m.HTML, "<h1>Order A-7</h1>")
	require.Contains(t, m.HTML, "<strong>Ada</strong>")
	require.Contains(t, m.HTML, "a gift")
	require.NotContains(t, m.HTML, "{{")
	require.Contains(t, m.Text, "HOUSE")
	require.Contains(t, m.Text, "Order A-7")
	require.Contains(t, m.Text, "Thanks Ada!")
	require.Contains(t, m.Text, "-- bye")
	require.NotContains(t, m.Text, "<")

	m = sent[byJob[transactional.JobID(e.account, "md-2")]]
	require.Contains(t, m.HTML, `<div class="promo">`)
	require.NotContains(t, m.HTML, "house")
	require.Contains(t, m.HTML, "<h1>Order A-7</h1>")
	require.Contains(t, m.Text, "Order A-7", "a layout without text: the Markdown's own text part")
}

// Markdown with html or text, a layout_id without Markdown, another account's or
// a missing layout, and Markdown whose template actions do not parse are 422s
// naming the field, with nothing stored.
func TestMarkdownMessageRefusals(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	otherAcct := testfactory.New(e.pool).Account(t, "b").ID
	foreign, err := layout.NewService(e.pool).Create(ctx, otherAcct, layout.Fields{Name: ptr("theirs"),
		HTML: ptr(`<div>{{content}}</div>`)})
	require.NoError(t, err)
	base := transactional.Request{To: "ada@example.com", From: "shop@example.com", Subject: ptr("Hi"), Markdown: ptr("# Hi")}
	for name, c := range map[string]struct {
		edit  func(*transactional.Request)
		field string
	}{
		"markdown and html":     {func(r *transactional.Request) { r.HTML = ptr("<p>x</p>") }, "/markdown"},
		"markdown and text":     {func(r *transactional.Request) { r.Text = ptr("x") }, "/markdown"},
		"layout without md":     {func(r *transactional.Request) { r.Markdown = nil; r.Text = ptr("x"); r.LayoutID = &foreign.ID }, "/layout_id"},
		"foreign layout":        {func(r *transactional.Request) { r.LayoutID = &foreign.ID }, "/layout_id"},
		"missing layout":        {func(r *transactional.Request) { r.LayoutID = ptr(int64(1 << 40)) }, "/layout_id"},
		"empty markdown":        {func(r *transactional.Request) { r.Markdown = ptr("  \n") }, "/markdown"},
		"broken action":         {func(r *transactional.Request) { r.Markdown = ptr("Hi {{.Name") }, "/markdown"},
		"unknown function":      {func(r *transactional.Request) { r.Markdown = ptr("Hi {{nosuch .Name}}") }, "/markdown"},
		"markdown and template": {func(r *transactional.Request) { r.Subject = nil; r.TemplateID = ptr(int64(1)) }, "/template_id"},
	} {
		req := base
		c.edit(&req)
		_, _, err := e.svc.Send(ctx, e.account, "k-"+name, req)
		require.Equal(t, c.field, fieldOf(t, err), name)
	}
	var n int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM messages WHERE account_id = $1`, e.account).Scan(&n))
	require.Zero(t, n)
}
