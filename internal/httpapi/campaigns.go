package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/campaign"
	"github.com/sendonce/sendonce/internal/optional"
)

func toAPICampaign(c campaign.Campaign) api.Campaign {
	ids := c.ListIDs
	if ids == nil {
		ids = []int64{}
	}
	return api.Campaign{Id: c.ID, Name: c.Name, Subject: c.Subject, FromEmail: c.FromEmail, FromName: c.FromName,
		ReplyTo: c.ReplyTo, HtmlTemplate: c.HTMLTemplate, TextTemplate: c.TextTemplate, Language: c.Language,
		ListIds: ids, TemplateId: c.TemplateID, SegmentId: c.SegmentID, Status: api.CampaignStatus(c.Status), AmbiguousPolicy: api.AmbiguousPolicy(c.AmbiguousPolicy),
		ScheduledFor: c.ScheduledFor, ApprovedAt: c.ApprovedAt, StartedAt: c.StartedAt, FinishedAt: c.FinishedAt,
		CancelledAt: c.CancelledAt, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		SenderId: c.SenderID, PoolId: c.PoolID, PausedReason: c.PausedReason, FailedReason: c.FailedReason,
		TrackClicks: c.TrackClicks, TrackOpens: c.TrackOpens, Archive: c.Archive,
		Attachments: attachment.ToAPI(c.Attachments), CreatedBy: createdBy(c),
		ContentType: (*api.CampaignContentType)(&c.ContentType), Markdown: &c.Markdown, Blocks: toAPIDesign(c.Blocks), LayoutId: c.LayoutID, DeliverAtLocal: c.DeliverAtLocal,
		SendWindow: toAPISendWindow(c.SendWindow)}
}

// toAPISendWindow and fromAPISendWindow convert a sending window (nil: none).
func toAPISendWindow(w *campaign.SendWindow) *api.SendWindow {
	if w == nil {
		return nil
	}
	out := &api.SendWindow{Start: w.Start, End: w.End, Days: make([]api.SendWindowDays, len(w.Days))}
	for i, d := range w.Days {
		out.Days[i] = api.SendWindowDays(d)
	}
	if w.TimeZone != "" {
		out.TimeZone = &w.TimeZone
	}
	return out
}

func fromAPISendWindow(w *api.SendWindow) *campaign.SendWindow {
	if w == nil {
		return nil
	}
	out := &campaign.SendWindow{Start: w.Start, End: w.End, TimeZone: optional.Value(w.TimeZone), Days: make([]string, len(w.Days))}
	for i, d := range w.Days {
		out.Days[i] = string(d)
	}
	return out
}

func policyPtr(p *api.AmbiguousPolicy) *string {
	if p == nil {
		return nil
	}
	s := string(*p)
	return &s
}

func (s *Server) listCampaigns(w http.ResponseWriter, r *http.Request) error {
	// Newest first pages downwards: its cursors are a listing of their own, so one
	// order's cursor cannot be replayed in the other.
	listing, newest := "campaigns", false
	switch r.URL.Query().Get("order") {
	case "", "oldest":
	case "newest":
		listing, newest = "campaigns-newest", true
	default:
		return apperr.Invalidf("/order", "order must be oldest or newest")
	}
	p, err := parsePage(r, listing)
	if err != nil {
		return err
	}
	var rows []campaign.Campaign
	if newest {
		rows, err = s.Campaigns.ListNewest(r.Context(), accountID(r), p.AfterID, queryString(r, "status"), p.Limit+1)
	} else {
		rows, err = s.Campaigns.List(r.Context(), accountID(r), p.AfterID, queryString(r, "status"), p.Limit+1)
	}
	if err != nil {
		return err
	}
	rows, next := pageOf(r, listing, p, rows, func(x campaign.Campaign) cursor { return cursor{ID: x.ID} })
	out := api.CampaignPage{Data: make([]api.Campaign, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPICampaign(x)
	}
	return encode(w, http.StatusOK, out)
}

func (s *Server) createCampaign(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.CampaignCreate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	if err := checkLists(r, optional.Value(in.ListIds)); err != nil {
		return err
	}
	c, err := s.Campaigns.Create(r.Context(), accountID(r), campaign.Fields{
		Name: &in.Name, Subject: in.Subject, FromEmail: &in.FromEmail, FromName: in.FromName, ReplyTo: in.ReplyTo,
		HTMLTemplate: in.HtmlTemplate, TextTemplate: in.TextTemplate, Language: in.Language, ListIDs: in.ListIds,
		AmbiguousPolicy: policyPtr(in.AmbiguousPolicy), TemplateID: in.TemplateId, SegmentID: in.SegmentId, SenderID: in.SenderId, PoolID: in.PoolId,
		TrackClicks: in.TrackClicks, TrackOpens: in.TrackOpens, Archive: in.Archive,
		Attachments: attachment.FromAPI(in.Attachments),
		ContentType: optional.AsString(in.ContentType), Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId, DeliverAtLocal: in.DeliverAtLocal,
		SendWindow: fromAPISendWindow(in.SendWindow),
	})
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPICampaign(c))
}

func (s *Server) getCampaign(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, err := s.Campaigns.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPICampaign(c))
}

func (s *Server) updateCampaign(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, nulls, err := decodeUpdate[api.CampaignUpdate](w, r, s.bodyLimitOf(r))
	if err != nil {
		return err
	}
	// null clears the segment, the sender and the layout; the services take 0 for that.
	var none int64
	if nulls["segment_id"] {
		in.SegmentId = &none
	}
	if nulls["sender_id"] {
		in.SenderId = &none
	}
	if nulls["pool_id"] {
		in.PoolId = &none
	}
	if nulls["layout_id"] {
		in.LayoutId = &none
	}
	if nulls["deliver_at_local"] {
		clear := ""
		in.DeliverAtLocal = &clear
	}
	if in.ListIds != nil {
		if err := checkLists(r, *in.ListIds); err != nil {
			return err
		}
	}
	c, err := s.Campaigns.Update(r.Context(), accountID(r), id, campaign.Fields{
		Name: in.Name, Subject: in.Subject, FromEmail: in.FromEmail, FromName: in.FromName, ReplyTo: in.ReplyTo,
		HTMLTemplate: in.HtmlTemplate, TextTemplate: in.TextTemplate, Language: in.Language, ListIDs: in.ListIds,
		AmbiguousPolicy: policyPtr(in.AmbiguousPolicy), TemplateID: in.TemplateId, SegmentID: in.SegmentId, SenderID: in.SenderId, PoolID: in.PoolId,
		TrackClicks: in.TrackClicks, TrackOpens: in.TrackOpens, Archive: in.Archive,
		Attachments: attachment.FromAPI(in.Attachments),
		ContentType: optional.AsString(in.ContentType), Markdown: in.Markdown, Blocks: raw(in.Blocks), LayoutID: in.LayoutId, DeliverAtLocal: in.DeliverAtLocal,
		SendWindow: fromAPISendWindow(in.SendWindow), ClearSendWindow: nulls["send_window"],
	})
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPICampaign(c))
}

func (s *Server) deleteCampaign(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Campaigns.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// approveCampaign takes an optional body: no body (or {}) means start now.
func (s *Server) approveCampaign(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		return decodeError(err, s.opts.MaxBodyBytes)
	}
	var in api.ApproveRequest
	if len(bytes.TrimSpace(body)) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if in, err = decode[api.ApproveRequest](w, r, s.opts.MaxBodyBytes); err != nil {
			return err
		}
	}
	check, checked, err := s.approvalDomainCheck(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	var c campaign.Campaign
	if checked != nil {
		c, err = s.Campaigns.ApproveChecked(r.Context(), accountID(r), id, in.ScheduledFor, *checked)
	} else {
		c, err = s.Campaigns.Approve(r.Context(), accountID(r), id, in.ScheduledFor)
	}
	if err != nil {
		return err
	}
	out := toAPICampaign(c)
	out.DomainCheck = check
	return encode(w, http.StatusOK, out)
}

// transition adapts a campaign transition without a body (unapprove, pause, resume,
// cancel) to a handler.
func transition(do func(ctx context.Context, accountID, id int64) (campaign.Campaign, error)) apiHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		c, err := do(r.Context(), accountID(r), id)
		if err != nil {
			return err
		}
		return encode(w, http.StatusOK, toAPICampaign(c))
	}
}

func (s *Server) campaignStats(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	st, err := s.Campaigns.Stats(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	eng, err := s.Tracking.Totals(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	c := st.Counts
	var skipped *api.BuildSkips
	if st.SkippedSuppressed != nil && st.SkippedUnconfirmed != nil {
		skipped = &api.BuildSkips{Suppressed: *st.SkippedSuppressed, Unconfirmed: *st.SkippedUnconfirmed}
	}
	return encode(w, http.StatusOK, api.CampaignStats{CampaignId: st.CampaignID, Status: api.CampaignStatus(st.Status),
		Total: st.Total, StartedAt: st.StartedAt, FinishedAt: st.FinishedAt, Skipped: skipped, Engagement: eng,
		Counts: api.SendCounts{Queued: c["queued"], Sending: c["sending"], Sent: c["sent"], Failed: c["failed"],
			Suppressed: c["suppressed"], Cancelled: c["cancelled"], Unknown: c["unknown"]}})
}

func (s *Server) campaignSends(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	p, err := parsePage(r, "sends")
	if err != nil {
		return err
	}
	var email *string
	if q := r.URL.Query(); q.Has("email") {
		v := q.Get("email")
		email = &v // present but empty is a 422, not "every address"
	}
	rows, err := s.Campaigns.SendsTo(r.Context(), accountID(r), id, p.AfterID, queryString(r, "status"), email, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "sends", p, rows, func(x campaign.Send) cursor { return cursor{ID: x.ID} })
	out := api.SendPage{Data: make([]api.Send, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = api.Send{Id: x.ID, SubscriberId: x.SubscriberID, Email: x.Email, Status: api.SendStatus(x.Status),
			Attempts: x.Attempts, SentAt: x.SentAt, LastError: x.LastError, ProviderMessageId: x.ProviderMessageID}
	}
	return encode(w, http.StatusOK, out)
}

// campaignTimeline answers the campaign's settled sends by when they settled.
func (s *Server) campaignTimeline(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	points, step, err := s.Campaigns.Timeline(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	out := api.CampaignTimeline{CampaignId: id, StepSeconds: step, Points: make([]api.CampaignTimelinePoint, len(points))}
	for i, p := range points {
		out.Points[i] = api.CampaignTimelinePoint{At: p.At, Sent: p.Sent, Failed: p.Failed, Suppressed: p.Suppressed,
			Cancelled: p.Cancelled, Unknown: p.Unknown, OpensPeople: p.OpensPeople, ClicksPeople: p.ClicksPeople,
			HardBounces: p.HardBounces, SoftBounces: p.SoftBounces, Complaints: p.Complaints, Unsubscribes: p.Unsubscribes}
	}
	return encode(w, http.StatusOK, out)
}

// campaignEvents answers the campaign's lifecycle events, newest first (at most 100).
func (s *Server) campaignEvents(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := s.Campaigns.Get(r.Context(), accountID(r), id); err != nil {
		return err
	}
	evs, err := s.Events.CampaignEvents(r.Context(), accountID(r), id, 100)
	if err != nil {
		return err
	}
	out := api.CampaignEventList{Data: make([]api.Event, len(evs))}
	for i, e := range evs {
		if out.Data[i], err = toAPIEvent(e); err != nil {
			return err
		}
	}
	return encode(w, http.StatusOK, out)
}

func createdBy(c campaign.Campaign) *struct {
	Id   int64                     `json:"id"`
	Type api.CampaignCreatedByType `json:"type"`
} {
	if c.CreatedByType == nil || c.CreatedByID == nil {
		return nil
	}
	return &struct {
		Id   int64                     `json:"id"`
		Type api.CampaignCreatedByType `json:"type"`
	}{Id: *c.CreatedByID, Type: api.CampaignCreatedByType(*c.CreatedByType)}
}
