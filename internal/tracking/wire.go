package tracking

import (
	"context"

	"github.com/sendonce/sendonce/api"
)

// API is the Service in the wire types of api/, as the HTTP API calls it. A page
// (web view, archive) is its HTML and its text part, HTML "" when it has none.
type API struct{ *Service }

// WebView is a campaign send's web view (Service.WebView).
func (a API) WebView(ctx context.Context, token string,
	unsubscribeURL func(accountID, campaignID, subscriberID int64) string) (html, text string, err error) {
	return page(a.Service.WebView(ctx, token, unsubscribeURL))
}

// MessageWebView is a single message's web view (Service.MessageWebView).
func (a API) MessageWebView(ctx context.Context, token string,
	unsubscribeURL func(accountID, streamID, messageID int64, email string) string) (html, text string, err error) {
	return page(a.Service.MessageWebView(ctx, token, unsubscribeURL))
}

// ArchivePage is a published campaign of the archive (Service.ArchivePage).
func (a API) ArchivePage(ctx context.Context, publicID string, id int64) (html, text string, err error) {
	return page(a.Service.ArchivePage(ctx, publicID, id))
}

func page(p Page, err error) (html, text string, _ error) {
	return p.HTML, p.Text, err
}

// Totals are a campaign's clicks and opens (Service.Totals).
func (a API) Totals(ctx context.Context, accountID, campaignID int64) (api.Engagement, error) {
	t, err := a.Service.Totals(ctx, accountID, campaignID)
	if err != nil {
		return api.Engagement{}, err
	}
	return toAPIEngagement(t), nil
}

// LinkStats are a campaign's clicks per link (Service.LinkStats).
func (a API) LinkStats(ctx context.Context, accountID, campaignID int64) ([]api.LinkClicks, error) {
	links, err := a.Service.LinkStats(ctx, accountID, campaignID)
	if err != nil {
		return nil, err
	}
	out := make([]api.LinkClicks, len(links))
	for i, l := range links {
		out[i] = api.LinkClicks{Index: l.Index, Url: l.URL, Total: l.Total, Unique: l.Unique, Human: l.Human,
			UniqueHuman: l.UniqueHuman}
	}
	return out, nil
}

func toAPIEngagement(t Totals) api.Engagement {
	return api.Engagement{Clicks: t.Clicks, UniqueClicks: t.UniqueClicks, HumanClicks: t.HumanClicks,
		UniqueHumanClicks: t.UniqueHumanClicks, HoneypotHits: t.HoneypotHits, Opens: t.Opens, UniqueOpens: t.UniqueOpens,
		HumanOpens: t.HumanOpens, UniqueHumanOpens: t.UniqueHumanOpens}
}
