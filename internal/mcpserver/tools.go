package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/optional"
)

// The tools' inputs and outputs. Their JSON schemas, which the client sees, are
// inferred from these structs by the MCP SDK (a jsonschema tag is a field's
// description; a field without omitempty is required), and every call's arguments
// are checked against them before a handler runs.

// byID is the input of the tools that take one id.
type byID struct {
	ID int64 `json:"id" jsonschema:"the campaign's id"`
}

// account is get_account's answer.
type account struct {
	ID               int64     `json:"id"`
	Name             string    `json:"name"`
	PublicID         string    `json:"public_id" jsonschema:"the public identifier of the account's sign-up form and web archive"`
	UnsubscribeScope string    `json:"unsubscribe_scope" jsonschema:"what a one-click unsubscribe removes: list (the campaign's lists) or account (every mail)"`
	FourEyes         bool      `json:"four_eyes" jsonschema:"when true a campaign must be approved by someone other than its creator"`
	CreatedAt        time.Time `json:"created_at"`
}

func (t tools) getAccount(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, account, error) {
	resp, err := t.c.GetAccountWithResponse(ctx)
	a, err := call(resp, err, func(r *client.GetAccountResponse) *client.Account { return r.JSON200 })
	if err != nil {
		return nil, account{}, err
	}
	return nil, account{ID: a.Id, Name: a.Name, PublicID: a.PublicId, UnsubscribeScope: string(a.UnsubscribeScope),
		FourEyes: a.FourEyes, CreatedAt: a.CreatedAt}, nil
}

// campaignSummary is a campaign in a listing: what tells campaigns apart.
type campaignSummary struct {
	ID           int64      `json:"id"`
	Name         string     `json:"name"`
	Status       string     `json:"status" jsonschema:"draft, approved, building, sending, paused, sent, cancelled or failed"`
	Subject      string     `json:"subject"`
	FromEmail    string     `json:"from_email"`
	ListIDs      []int64    `json:"list_ids" jsonschema:"target lists; empty means every confirmed subscriber"`
	SegmentID    *int64     `json:"segment_id"`
	TemplateID   *int64     `json:"template_id"`
	ScheduledFor *time.Time `json:"scheduled_for"`
	StartedAt    *time.Time `json:"started_at"`
	FinishedAt   *time.Time `json:"finished_at"`
	CreatedAt    time.Time  `json:"created_at"`
}

func summary(c *client.Campaign) campaignSummary {
	return campaignSummary{ID: c.Id, Name: c.Name, Status: string(c.Status), Subject: c.Subject, FromEmail: c.FromEmail,
		ListIDs: c.ListIds, SegmentID: c.SegmentId, TemplateID: c.TemplateId, ScheduledFor: c.ScheduledFor,
		StartedAt: c.StartedAt, FinishedAt: c.FinishedAt, CreatedAt: c.CreatedAt}
}

type listCampaignsInput struct {
	Status string `json:"status,omitempty" jsonschema:"only campaigns of this status: draft, approved, building, sending, paused, sent, cancelled or failed"`
	Order  string `json:"order,omitempty" jsonschema:"oldest (default) or newest first"`
	page
}

type campaignPage struct {
	Campaigns  []campaignSummary `json:"campaigns"`
	NextCursor string            `json:"next_cursor" jsonschema:"pass as cursor for the next page; empty at the end"`
}

func (t tools) listCampaigns(ctx context.Context, _ *mcp.CallToolRequest, in listCampaignsInput) (*mcp.CallToolResult, campaignPage, error) {
	limit, cursor, err := in.params()
	if err != nil {
		return nil, campaignPage{}, err
	}
	p := &client.ListCampaignsParams{Limit: limit, Cursor: cursor}
	if in.Status != "" {
		st := client.CampaignStatus(in.Status)
		if !st.Valid() {
			return nil, campaignPage{}, fmt.Errorf("status %q is not one of draft, approved, building, sending, paused, sent, cancelled, failed", in.Status)
		}
		p.Status = &st
	}
	if in.Order != "" {
		o := client.ListCampaignsParamsOrder(in.Order)
		if !o.Valid() {
			return nil, campaignPage{}, fmt.Errorf("order %q is not oldest or newest", in.Order)
		}
		p.Order = &o
	}
	got, err := t.c.Campaigns.List(ctx, p)
	if err != nil {
		return nil, campaignPage{}, apiError(err)
	}
	out := campaignPage{Campaigns: []campaignSummary{}, NextCursor: next(got.NextCursor)}
	for i := range got.Data {
		out.Campaigns = append(out.Campaigns, summary(&got.Data[i]))
	}
	return nil, out, nil
}

// maxTemplate caps each template get_campaign returns, in bytes.
const maxTemplate = 16 << 10

// campaignDetail is get_campaign's answer.
type campaignDetail struct {
	campaignSummary
	FromName        string     `json:"from_name"`
	ReplyTo         string     `json:"reply_to"`
	HTMLTemplate    string     `json:"html_template"`
	TextTemplate    string     `json:"text_template"`
	Truncated       bool       `json:"truncated" jsonschema:"true when a template was longer than 16 KB and is cut here"`
	TrackClicks     bool       `json:"track_clicks"`
	TrackOpens      bool       `json:"track_opens"`
	SenderID        *int64     `json:"sender_id" jsonschema:"null: the account's default sender"`
	FailedReason    *string    `json:"failed_reason"`
	PausedReason    *string    `json:"paused_reason"`
	ApprovedAt      *time.Time `json:"approved_at"`
	CancelledAt     *time.Time `json:"cancelled_at"`
	Attachments     int        `json:"attachments" jsonschema:"how many files every recipient gets"`
	AmbiguousPolicy string     `json:"ambiguous_policy" jsonschema:"skip or retry: what happens to a send in flight when a process dies and the provider cannot deduplicate"`
}

func detail(c *client.Campaign) campaignDetail {
	html, cutHTML := cut(c.HtmlTemplate, maxTemplate)
	text, cutText := cut(c.TextTemplate, maxTemplate)
	d := campaignDetail{campaignSummary: summary(c), FromName: c.FromName, ReplyTo: c.ReplyTo, HTMLTemplate: html,
		TextTemplate: text, Truncated: cutHTML || cutText, TrackClicks: c.TrackClicks, TrackOpens: c.TrackOpens,
		SenderID: c.SenderId, FailedReason: c.FailedReason, PausedReason: c.PausedReason, ApprovedAt: c.ApprovedAt,
		CancelledAt: c.CancelledAt, AmbiguousPolicy: string(c.AmbiguousPolicy)}
	if c.Attachments != nil {
		d.Attachments = len(*c.Attachments)
	}
	return d
}

// cut returns s cut to at most n bytes at a character boundary, and whether it was.
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

func (t tools) getCampaign(ctx context.Context, _ *mcp.CallToolRequest, in byID) (*mcp.CallToolResult, campaignDetail, error) {
	c, err := t.c.Campaigns.Get(ctx, in.ID)
	if err != nil {
		return nil, campaignDetail{}, apiError(err)
	}
	return nil, detail(c), nil
}

// maxLinks caps the tracked links get_campaign_stats returns.
const maxLinks = 50

// campaignStats is get_campaign_stats's answer: the API's stats and report.
type campaignStats struct {
	Stats       client.CampaignStats  `json:"stats" jsonschema:"send rows by status, engagement totals, whom the build left out"`
	Report      client.CampaignReport `json:"report" jsonschema:"outcomes, feedback, opens and clicks, rates, domains and links"`
	LinksCut    bool                  `json:"links_truncated" jsonschema:"true when the campaign has more than 50 tracked links and only the first 50 are here"`
	Definitions string                `json:"definitions"`
}

func (t tools) getCampaignStats(ctx context.Context, _ *mcp.CallToolRequest, in byID) (*mcp.CallToolResult, campaignStats, error) {
	resp, err := t.c.GetCampaignStatsWithResponse(ctx, in.ID)
	stats, err := call(resp, err, func(r *client.GetCampaignStatsResponse) *client.CampaignStats { return r.JSON200 })
	if err != nil {
		return nil, campaignStats{}, err
	}
	rresp, err := t.c.GetCampaignReportWithResponse(ctx, in.ID, nil)
	report, err := call(rresp, err, func(r *client.GetCampaignReportResponse) *client.CampaignReport { return r.JSON200 })
	if err != nil {
		return nil, campaignStats{}, err
	}
	out := campaignStats{Stats: *stats, Report: *report, Definitions: "rates are fractions (0 to 1) of report.rates.denominator; " +
		"opens and clicks in rates count people, not bots or scanners; opens are unreliable (Apple Mail Privacy Protection opens every message)"}
	if len(out.Report.Links) > maxLinks {
		out.Report.Links, out.LinksCut = out.Report.Links[:maxLinks], true
	}
	return nil, out, nil
}

// subscriber is a subscriber as the tools return it.
type subscriber struct {
	ID         int64          `json:"id"`
	Email      string         `json:"email"`
	Name       string         `json:"name"`
	Status     string         `json:"status" jsonschema:"pending, confirmed or unsubscribed"`
	Attributes map[string]any `json:"attributes" jsonschema:"free-form data the templates see as .Attributes"`
	CreatedAt  time.Time      `json:"created_at"`
}

func toSubscriber(s *client.Subscriber) subscriber {
	attrs := map[string]any(s.Attributes)
	if attrs == nil {
		attrs = map[string]any{}
	}
	return subscriber{ID: s.Id, Email: s.Email, Name: s.Name, Status: string(s.Status), Attributes: attrs, CreatedAt: s.CreatedAt}
}

type listSubscribersInput struct {
	Status string `json:"status,omitempty" jsonschema:"only subscribers of this status: pending, confirmed or unsubscribed"`
	ListID int64  `json:"list_id,omitempty" jsonschema:"only the subscribed members of this list"`
	page
}

type searchSubscribersInput struct {
	Email  string `json:"email" jsonschema:"the beginning of the address, matched case-insensitively (ada@ finds ada@example.com)"`
	Status string `json:"status,omitempty" jsonschema:"only subscribers of this status: pending, confirmed or unsubscribed"`
	page
}

type subscriberPage struct {
	Subscribers []subscriber `json:"subscribers"`
	NextCursor  string       `json:"next_cursor" jsonschema:"pass as cursor for the next page; empty at the end"`
}

func (t tools) listSubscribers(ctx context.Context, _ *mcp.CallToolRequest, in listSubscribersInput) (*mcp.CallToolResult, subscriberPage, error) {
	out, err := t.subscribers(ctx, in.page, in.Status, in.ListID, "")
	return nil, out, err
}

func (t tools) searchSubscribers(ctx context.Context, _ *mcp.CallToolRequest, in searchSubscribersInput) (*mcp.CallToolResult, subscriberPage, error) {
	if strings.TrimSpace(in.Email) == "" {
		return nil, subscriberPage{}, fmt.Errorf("email must not be empty: give the beginning of an address (list_subscribers lists everyone)")
	}
	out, err := t.subscribers(ctx, in.page, in.Status, 0, strings.ToLower(strings.TrimSpace(in.Email)))
	return nil, out, err
}

func (t tools) subscribers(ctx context.Context, pg page, status string, listID int64, email string) (subscriberPage, error) {
	limit, cursor, err := pg.params()
	if err != nil {
		return subscriberPage{}, err
	}
	p := &client.ListSubscribersParams{Limit: limit, Cursor: cursor}
	if status != "" {
		st := client.SubscriberStatus(status)
		if !st.Valid() {
			return subscriberPage{}, fmt.Errorf("status %q is not one of pending, confirmed, unsubscribed", status)
		}
		p.Status = &st
	}
	if listID != 0 {
		p.ListId = &listID
	}
	if email != "" {
		p.Email = &email
	}
	got, err := t.c.Subscribers.List(ctx, p)
	if err != nil {
		return subscriberPage{}, apiError(err)
	}
	out := subscriberPage{Subscribers: []subscriber{}, NextCursor: next(got.NextCursor)}
	for i := range got.Data {
		out.Subscribers = append(out.Subscribers, toSubscriber(&got.Data[i]))
	}
	return out, nil
}

type getSubscriberInput struct {
	ID    int64  `json:"id,omitempty" jsonschema:"the subscriber's id (or give email)"`
	Email string `json:"email,omitempty" jsonschema:"the subscriber's exact address (or give id)"`
}

func (t tools) getSubscriber(ctx context.Context, _ *mcp.CallToolRequest, in getSubscriberInput) (*mcp.CallToolResult, subscriber, error) {
	switch {
	case (in.ID == 0) == (in.Email == ""):
		return nil, subscriber{}, fmt.Errorf("give either id or email")
	case in.ID != 0:
		s, err := t.c.Subscribers.Get(ctx, in.ID)
		if err != nil {
			return nil, subscriber{}, apiError(err)
		}
		return nil, toSubscriber(s), nil
	}
	want := strings.ToLower(strings.TrimSpace(in.Email))
	// The listing filters on a prefix: the exact address is among its matches.
	for s, err := range t.c.Subscribers.Iter(ctx, client.ListSubscribersParams{Email: &want, Limit: optional.Of(maxLimit)}) {
		if err != nil {
			return nil, subscriber{}, apiError(err)
		}
		if strings.EqualFold(s.Email, want) {
			return nil, toSubscriber(&s), nil
		}
	}
	return nil, subscriber{}, fmt.Errorf("no subscriber has the address %s", in.Email)
}

// list is a list as list_lists returns it.
type list struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	MemberCount int64  `json:"member_count" jsonschema:"subscribed members"`
	Optin       string `json:"optin" jsonschema:"single or double opt-in"`
	Public      bool   `json:"public" jsonschema:"whether the public sign-up form may subscribe to it"`
}

type listPage struct {
	Lists      []list `json:"lists"`
	NextCursor string `json:"next_cursor" jsonschema:"pass as cursor for the next page; empty at the end"`
}

func (t tools) listLists(ctx context.Context, _ *mcp.CallToolRequest, in page) (*mcp.CallToolResult, listPage, error) {
	limit, cursor, err := in.params()
	if err != nil {
		return nil, listPage{}, err
	}
	resp, err := t.c.ListListsWithResponse(ctx, &client.ListListsParams{Limit: limit, Cursor: cursor})
	got, err := call(resp, err, func(r *client.ListListsResponse) *client.ListPage { return r.JSON200 })
	if err != nil {
		return nil, listPage{}, err
	}
	out := listPage{Lists: []list{}, NextCursor: next(got.NextCursor)}
	for _, l := range got.Data {
		out.Lists = append(out.Lists, list{ID: l.Id, Name: l.Name, Description: l.Description, MemberCount: l.MemberCount,
			Optin: string(l.Optin), Public: l.Public})
	}
	return nil, out, nil
}

// template is a template as list_templates returns it (no bodies).
type template struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Subject   string    `json:"subject"`
	Language  string    `json:"language"`
	UpdatedAt time.Time `json:"updated_at"`
}

type templatePage struct {
	Templates  []template `json:"templates"`
	NextCursor string     `json:"next_cursor" jsonschema:"pass as cursor for the next page; empty at the end"`
}

func (t tools) listTemplates(ctx context.Context, _ *mcp.CallToolRequest, in page) (*mcp.CallToolResult, templatePage, error) {
	limit, cursor, err := in.params()
	if err != nil {
		return nil, templatePage{}, err
	}
	resp, err := t.c.ListTemplatesWithResponse(ctx, &client.ListTemplatesParams{Limit: limit, Cursor: cursor})
	got, err := call(resp, err, func(r *client.ListTemplatesResponse) *client.TemplatePage { return r.JSON200 })
	if err != nil {
		return nil, templatePage{}, err
	}
	out := templatePage{Templates: []template{}, NextCursor: next(got.NextCursor)}
	for _, tp := range got.Data {
		out.Templates = append(out.Templates, template{ID: tp.Id, Name: tp.Name, Subject: tp.Subject, Language: tp.Language, UpdatedAt: tp.UpdatedAt})
	}
	return nil, out, nil
}

// segment is a segment as list_segments returns it.
type segment struct {
	ID            int64      `json:"id"`
	Name          string     `json:"name"`
	Match         string     `json:"match" jsonschema:"the attribute predicate as PostgreSQL prints it; empty: none"`
	ListIDs       []int64    `json:"list_ids"`
	Statuses      []string   `json:"statuses"`
	CreatedAfter  *time.Time `json:"created_after"`
	CreatedBefore *time.Time `json:"created_before"`
}

type segmentPage struct {
	Segments   []segment `json:"segments"`
	NextCursor string    `json:"next_cursor" jsonschema:"pass as cursor for the next page; empty at the end"`
}

func (t tools) listSegments(ctx context.Context, _ *mcp.CallToolRequest, in page) (*mcp.CallToolResult, segmentPage, error) {
	limit, cursor, err := in.params()
	if err != nil {
		return nil, segmentPage{}, err
	}
	resp, err := t.c.ListSegmentsWithResponse(ctx, &client.ListSegmentsParams{Limit: limit, Cursor: cursor})
	got, err := call(resp, err, func(r *client.ListSegmentsResponse) *client.SegmentPage { return r.JSON200 })
	if err != nil {
		return nil, segmentPage{}, err
	}
	out := segmentPage{Segments: []segment{}, NextCursor: next(got.NextCursor)}
	for _, s := range got.Data {
		out.Segments = append(out.Segments, segment{ID: s.Id, Name: s.Name, Match: s.Match, ListIDs: s.ListIds,
			Statuses: s.Statuses, CreatedAfter: s.CreatedAfter, CreatedBefore: s.CreatedBefore})
	}
	return nil, out, nil
}

// draftInput is draft_campaign's input: the fields of a campaign create that
// describe its content and audience (not its tracking or sending policy, which
// keep the account's defaults).
type draftInput struct {
	Name           string  `json:"name" jsonschema:"the campaign's name, for people (recipients do not see it)"`
	FromEmail      string  `json:"from_email" jsonschema:"the From address; the sender must allow it when the campaign is approved"`
	FromName       string  `json:"from_name,omitempty"`
	ReplyTo        string  `json:"reply_to,omitempty"`
	Subject        string  `json:"subject,omitempty" jsonschema:"the subject, a Go template ({{.Name}}); not needed with template_id"`
	HTML           string  `json:"html,omitempty" jsonschema:"the HTML body, a Go template"`
	Text           string  `json:"text,omitempty" jsonschema:"the plain-text body, a Go template"`
	TemplateID     int64   `json:"template_id,omitempty" jsonschema:"one of the account's templates (list_templates) to take subject and bodies from"`
	ListIDs        []int64 `json:"list_ids,omitempty" jsonschema:"the lists to send to (list_lists); none means every confirmed subscriber"`
	SegmentID      int64   `json:"segment_id,omitempty" jsonschema:"a segment (list_segments) that narrows the audience"`
	Language       string  `json:"language,omitempty" jsonschema:"the content's language, e.g. en"`
	SenderID       int64   `json:"sender_id,omitempty" jsonschema:"one of the account's senders; none: its default sender"`
	IdempotencyKey string  `json:"idempotency_key,omitempty" jsonschema:"a key naming this draft: calling again with the same key and input returns the same draft instead of a second one"`
}

// draftResult is draft_campaign's answer.
type draftResult struct {
	Campaign campaignDetail `json:"campaign"`
	Next     string         `json:"next" jsonschema:"what has to happen before anything is sent"`
}

func (t tools) draftCampaign(ctx context.Context, _ *mcp.CallToolRequest, in draftInput) (*mcp.CallToolResult, draftResult, error) {
	body := client.CampaignCreate{Name: in.Name, FromEmail: in.FromEmail}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	id := func(v int64) *int64 {
		if v == 0 {
			return nil
		}
		return &v
	}
	body.FromName, body.ReplyTo, body.Subject = opt(in.FromName), opt(in.ReplyTo), opt(in.Subject)
	body.HtmlTemplate, body.TextTemplate, body.Language = opt(in.HTML), opt(in.Text), opt(in.Language)
	body.TemplateId, body.SegmentId, body.SenderId = id(in.TemplateID), id(in.SegmentID), id(in.SenderID)
	if len(in.ListIDs) > 0 {
		body.ListIds = &in.ListIDs
	}
	var opts []client.RequestEditorFn
	if in.IdempotencyKey != "" {
		opts = append(opts, client.Key(in.IdempotencyKey))
	}
	c, err := t.c.Campaigns.Create(ctx, &body, opts...)
	if err != nil {
		return nil, draftResult{}, apiError(err)
	}
	return nil, draftResult{Campaign: detail(c), Next: fmt.Sprintf("campaign %d is a draft: nothing is sent until a person "+
		"approves it in the dashboard or with `sendonce campaigns approve %d`", c.Id, c.Id)}, nil
}
