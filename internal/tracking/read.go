package tracking

import (
	"bytes"
	"context"
	htmltemplate "html/template"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

// LinkStats are one tracked link's clicks: every hit, distinct recipients, and
// the same counting only hits not suspected of being bots.
type LinkStats struct {
	Index                             int
	URL                               string
	Total, Unique, Human, UniqueHuman int64
}

// Totals are a campaign's clicks and opens. Honeypot hits are bots by definition
// and counted apart, never as clicks.
type Totals struct {
	Clicks, UniqueClicks, HumanClicks, UniqueHumanClicks int64
	HoneypotHits                                         int64
	Opens, UniqueOpens, HumanOpens, UniqueHumanOpens     int64
}

// exists answers not_found unless the campaign is the account's.
func (s *Service) exists(ctx context.Context, accountID, campaignID int64) error {
	_, err := s.q.CampaignStatusGet(ctx, store.CampaignStatusGetParams{AccountID: accountID, ID: campaignID})
	return postgres.Error(err, "campaign")
}

// LinkStats returns a campaign's clicks per tracked link, in link order.
func (s *Service) LinkStats(ctx context.Context, accountID, campaignID int64) ([]LinkStats, error) {
	if err := s.exists(ctx, accountID, campaignID); err != nil {
		return nil, err
	}
	rows, err := s.q.TrackingLinkStats(ctx, store.TrackingLinkStatsParams{AccountID: accountID, CampaignID: campaignID})
	if err != nil {
		return nil, err
	}
	out := make([]LinkStats, len(rows))
	for i, r := range rows {
		out[i] = LinkStats{Index: int(r.Idx), URL: r.Url, Total: r.Total, Unique: r.UniqueTotal, Human: r.Human,
			UniqueHuman: r.UniqueHuman}
	}
	return out, nil
}

// TotalsTTL is how long a campaign's totals are reused: GET /v1/campaigns/{id}/stats
// carries them, and dashboards poll it; counting a large campaign's hits on every
// poll would cost more than the answer is worth.
const TotalsTTL = time.Second

type cachedTotals struct {
	accountID int64
	at        time.Time
	t         Totals
}

// Totals returns a campaign's click and open totals, at most TotalsTTL old.
func (s *Service) Totals(ctx context.Context, accountID, campaignID int64) (Totals, error) {
	now := s.cfg.Now()
	s.totalsMu.Lock()
	c, ok := s.totals[campaignID]
	s.totalsMu.Unlock()
	if ok && c.accountID == accountID && now.Sub(c.at) < TotalsTTL && !now.Before(c.at) {
		return c.t, nil
	}
	if err := s.exists(ctx, accountID, campaignID); err != nil {
		return Totals{}, err
	}
	r, err := s.q.TrackingCampaignTotals(ctx, store.TrackingCampaignTotalsParams{AccountID: accountID, CampaignID: campaignID})
	if err != nil {
		return Totals{}, err
	}
	t := totalsOf(r)
	s.totalsMu.Lock()
	if len(s.totals) >= s.cfg.LinkCache {
		clear(s.totals)
	}
	s.totals[campaignID] = cachedTotals{accountID: accountID, at: now, t: t}
	s.totalsMu.Unlock()
	return t, nil
}

func totalsOf(r store.TrackingCampaignTotalsRow) Totals {
	return Totals{Clicks: r.Clicks, UniqueClicks: r.UniqueClicks, HumanClicks: r.HumanClicks,
		UniqueHumanClicks: r.UniqueHumanClicks, HoneypotHits: r.HoneypotHits, Opens: r.Opens, UniqueOpens: r.UniqueOpens,
		HumanOpens: r.HumanOpens, UniqueHumanOpens: r.UniqueHumanOpens}
}

// Page is a rendered campaign for a browser.
type Page struct {
	Subject, HTML, Text string
}

// ArchiveEntry is one published campaign in an account's archive.
type ArchiveEntry struct {
	ID        int64
	Name      string
	Subject   string
	StartedAt *time.Time
}

// ArchiveIndex renders the list of an account's published campaigns as a page;
// base is the archive's address (/archive/{public id}).
func (s *Service) ArchiveIndex(ctx context.Context, publicID, base string) ([]byte, error) {
	acct, err := s.q.ArchiveAccount(ctx, publicID)
	if err != nil {
		return nil, postgres.Error(err, "archive")
	}
	rows, err := s.q.ArchiveCampaignList(ctx, acct.ID)
	if err != nil {
		return nil, err
	}
	d := indexData{Account: acct.Name, Base: base}
	for _, r := range rows {
		d.Campaigns = append(d.Campaigns, ArchiveEntry{ID: r.ID, Name: r.Name, Subject: archiveSubject(r.Subject, r.Name),
			StartedAt: r.StartedAt})
	}
	var b bytes.Buffer
	if err := indexPage.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// archiveSubject is a subject as its archive page shows it (RenderArchive: no
// recipient, .Archive true), never the template's source. A subject that cannot
// render so would fail its own page too; the list names the campaign instead of
// failing for every other one.
func archiveSubject(subject, name string) string {
	t, err := render.Parse(subject, "", "")
	if err != nil {
		return name
	}
	r, err := t.RenderArchive()
	if err != nil {
		return name
	}
	return r.Subject
}

type indexData struct {
	Account   string
	Base      string
	Campaigns []ArchiveEntry
}

var indexPage = htmltemplate.Must(htmltemplate.New("archive").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Account}}: archive</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}li{margin:.5rem 0}time{color:#555}</style>
</head><body><main><h1>{{.Account}}</h1>
{{if .Campaigns}}<ul>{{range .Campaigns}}<li><a href="{{$.Base}}/{{.ID}}">{{.Subject}}</a>{{with .StartedAt}} <time datetime="{{.Format "2006-01-02"}}">{{.Format "2 January 2006"}}</time>{{end}}</li>{{end}}</ul>
{{else}}<p>Nothing published yet.</p>{{end}}
</main></body></html>
`))

// ArchivePage renders one published campaign with no recipient: .Archive is true,
// every recipient field and attribute empty, so the template decides what stands
// in their place; the links are the original ones.
func (s *Service) ArchivePage(ctx context.Context, publicID string, id int64) (Page, error) {
	acct, err := s.q.ArchiveAccount(ctx, publicID)
	if err != nil {
		return Page{}, postgres.Error(err, "archive")
	}
	c, err := s.q.ArchiveCampaignGet(ctx, store.ArchiveCampaignGetParams{AccountID: acct.ID, ID: id})
	if err != nil {
		return Page{}, postgres.Error(err, "campaign")
	}
	t, err := render.Parse(c.Subject, c.HtmlTemplate, c.TextTemplate)
	if err != nil {
		return Page{}, err
	}
	r, err := t.RenderArchive()
	if err != nil {
		return Page{}, err
	}
	return Page{Subject: r.Subject, HTML: r.HTML, Text: r.Text}, nil
}

// WebView renders the message a "view in browser" token names, for its
// recipient, as it was sent (without tracking). unsubscribeURL makes the
// recipient's one-click link; nil leaves {{.UnsubscribeURL}} empty.
func (s *Service) WebView(ctx context.Context, token string,
	unsubscribeURL func(accountID, campaignID, subscriberID int64) string) (Page, error) {
	send, err := s.tokens.OpenView(token)
	if err != nil {
		return Page{}, errNotFound
	}
	row, err := s.q.WebViewSend(ctx, store.WebViewSendParams{AccountID: send.AccountID, CampaignID: send.CampaignID,
		SendID: send.SendID})
	if err != nil {
		if apperr.Is(postgres.Error(err, "message"), apperr.NotFound) {
			return Page{}, errNotFound // a send past retention, or a deleted campaign
		}
		return Page{}, err
	}
	t, err := render.Parse(row.Subject, row.HtmlTemplate, row.TextTemplate)
	if err != nil {
		return Page{}, err
	}
	u := ""
	if unsubscribeURL != nil {
		u = unsubscribeURL(send.AccountID, send.CampaignID, row.SubscriberID)
	}
	r, err := t.RenderWebView(render.Recipient{Email: row.Email, Name: row.Name, Attributes: row.Attributes,
		Event: row.Event}, u,
		s.tokens.base+"/v/"+token)
	if err != nil {
		return Page{}, err
	}
	return Page{Subject: r.Subject, HTML: r.HTML, Text: r.Text}, nil
}

// MessageWebView renders the single message a message "view in browser" token
// names, as its recipient got it: its own templates over its own data (which is
// that recipient's, so only that message's token opens it), without tracking.
// unsubscribeURL makes a marketing message's one-click link (nil: left empty);
// a transactional message never had one. A token of another purpose, or a
// message deleted by retention, is errNotFound.
func (s *Service) MessageWebView(ctx context.Context, token string,
	unsubscribeURL func(accountID, streamID, messageID int64, email string) string) (Page, error) {
	send, err := s.tokens.OpenMessageView(token)
	if err != nil {
		return Page{}, errNotFound
	}
	row, err := s.q.MessageWebView(ctx, store.MessageWebViewParams{AccountID: send.AccountID, MessageID: send.MessageID,
		StreamID: send.CampaignID, SendID: send.SendID})
	if err != nil {
		if apperr.Is(postgres.Error(err, "message"), apperr.NotFound) {
			return Page{}, errNotFound
		}
		return Page{}, err
	}
	t, err := render.Parse(row.Subject, row.Html, row.Text)
	if err != nil {
		return Page{}, err
	}
	u := ""
	if unsubscribeURL != nil && row.Category == "marketing" {
		u = unsubscribeURL(send.AccountID, row.StreamID, row.ID, row.Email)
	}
	r, err := t.RenderWebView(render.Recipient{Email: row.Email, Name: row.ToName, Attributes: row.Data}, u,
		s.tokens.base+"/v/"+token)
	if err != nil {
		return Page{}, err
	}
	return Page{Subject: r.Subject, HTML: r.HTML, Text: r.Text}, nil
}
