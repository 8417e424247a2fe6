// Package campaign is the tenant's side of campaigns: create and edit drafts, and the
// transitions a tenant may make (approve, unapprove, pause, resume, cancel), each one
// compare-and-set UPDATE. The executor owns approved → sending and sending → sent.
package campaign

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/audit"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/sendwindow"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/template"
)

// Campaign statuses.
const (
	StatusDraft     = "draft"
	StatusApproved  = "approved"
	StatusBuilding  = "building" // the executor builds the recipient list; nothing sent yet
	StatusSending   = "sending"
	StatusPaused    = "paused"
	StatusSent      = "sent"
	StatusCancelled = "cancelled"
	StatusFailed    = "failed" // could not start (FailedReason says why); nothing was sent
)

// Service manages campaigns.
type Service struct {
	pool  *pgxpool.Pool
	stats *statsCache
	// Messages builds test sends exactly as the executor builds real ones (the
	// same Message-ID key); the caller sets it before Test is called.
	Messages *render.Builder
}

// NewService returns a Service on pool.
func NewService(pool *pgxpool.Pool) *Service { return NewServiceClock(pool, time.Now) }

// NewServiceClock returns a Service on pool whose stats cache reads the time from
// now; tests inject a clock to move past StatsTTL without sleeping.
func NewServiceClock(pool *pgxpool.Pool, now func() time.Time) *Service {
	return &Service{pool: pool, stats: newStatsCache(now, StatsTTL)}
}

// Campaign is one campaign of an account.
type Campaign struct {
	ID                                  int64
	Name, Subject, FromEmail, FromName  string
	ReplyTo, HTMLTemplate, TextTemplate string
	Language                            string
	ListIDs                             []int64
	// CreatedByType and CreatedByID are the actor that created it (nil: unknown,
	// made before creators were recorded).
	CreatedByType *string
	CreatedByID   *int64
	// TemplateID is the template the campaign takes its content from when it is
	// approved; nil means its own subject and templates.
	TemplateID *int64
	// ContentType is "html" or "markdown": then Markdown is the author's and
	// HTMLTemplate and TextTemplate what it composes to in LayoutID (nil: the
	// account's default layout), recomposed while a draft, pinned at approval.
	// "blocks" is the same with Blocks, the visual builder's design.
	ContentType, Markdown               string
	Blocks                              json.RawMessage
	LayoutID                            *int64
	SegmentID                           *int64 // narrows the lists' audience; nil: none
	Status, AmbiguousPolicy             string
	ScheduledFor, ApprovedAt, StartedAt *time.Time
	FinishedAt, CancelledAt             *time.Time
	CreatedAt, UpdatedAt                time.Time
	// SenderID is the sender the campaign names; nil: the account default sender,
	// else the environment's provider.
	SenderID *int64
	// PoolID is the sender pool the campaign names instead of a sender (its first
	// usable sender, failing over to the next: docs/providers.md); nil: none.
	PoolID *int64
	// PausedReason says why the system paused the campaign (a sender's repeated
	// auth/config failures); nil when paused by hand or not paused.
	PausedReason *string
	// FailedReason says why the campaign could not start (status failed).
	FailedReason *string
	// DeliverAtLocal ("HH:MM") sends each recipient at that wall-clock time in
	// their own zone (docs/executor.md, When mail goes out); nil: at once.
	DeliverAtLocal *string
	// SendWindow is when its rows may be claimed (weekdays and hours in a zone,
	// docs/executor.md, Sending windows); nil: at any time.
	SendWindow *sendwindow.Window
	// TrackClicks rewrites the campaign's literal links to signed redirects;
	// TrackOpens adds the open pixel; Archive publishes it in the account's web
	// archive once it goes out (docs/engagement.md).
	TrackClicks, TrackOpens, Archive bool
	// Attachments are the files every recipient gets (not their bytes); filled
	// by Get, Create and Update, not by List.
	Attachments []attachment.Info
}

// SendWindow is a campaign's sending window (internal/sendwindow).
type SendWindow = sendwindow.Window

// Fields are the editable fields of a campaign; nil keeps (or defaults) a field.
type Fields struct {
	Name, Subject, FromEmail, FromName, ReplyTo *string
	HTMLTemplate, TextTemplate, Language        *string
	ListIDs                                     *[]int64
	AmbiguousPolicy                             *string
	// SegmentID sets the segment; 0 clears it (on update).
	SegmentID *int64
	// SenderID names one of the account's senders; 0 clears it.
	SenderID *int64
	// PoolID names one of the account's sender pools (and clears the sender); 0 clears it.
	PoolID *int64
	// TemplateID makes the campaign take its content from a template (the
	// account's) at approval, instead of its own subject and templates.
	TemplateID *int64
	// TrackClicks, TrackOpens and Archive switch engagement tracking and the
	// web archive (defaults: on, off, off).
	TrackClicks, TrackOpens, Archive *bool
	// Attachments replace the campaign's files (an empty list removes them).
	Attachments *[]attachment.Input
	files       []provider.Attachment // Attachments checked and decoded by normalize
	// ContentType, Markdown, Blocks and LayoutID set composed content (template.Content's rules).
	ContentType, Markdown *string
	Blocks                json.RawMessage
	LayoutID              *int64
	// DeliverAtLocal sets the local delivery time ("HH:MM"); "" clears it.
	DeliverAtLocal *string
	// SendWindow sets the sending window; ClearSendWindow clears it.
	SendWindow      *sendwindow.Window
	ClearSendWindow bool
}

func (f Fields) change() template.Change {
	return template.Change{Type: f.ContentType, Markdown: f.Markdown, Blocks: f.Blocks, LayoutID: f.LayoutID,
		HTMLGiven: f.HTMLTemplate != nil || f.TextTemplate != nil}
}

// engagement reports whether f sets any of the tracking and archive switches.
func (f Fields) engagement() bool {
	return f.TrackClicks != nil || f.TrackOpens != nil || f.Archive != nil
}

// onlyArchive reports whether f sets archive and nothing else.
func (f Fields) onlyArchive() bool {
	return f.Archive != nil && f.Name == nil && f.Subject == nil && f.FromEmail == nil && f.FromName == nil &&
		f.ReplyTo == nil && f.HTMLTemplate == nil && f.TextTemplate == nil && f.Language == nil && f.ListIDs == nil &&
		f.AmbiguousPolicy == nil && f.SegmentID == nil && f.SenderID == nil && f.PoolID == nil && f.TemplateID == nil &&
		f.TrackClicks == nil && f.TrackOpens == nil && f.Attachments == nil && f.DeliverAtLocal == nil &&
		f.SendWindow == nil && !f.ClearSendWindow
}

// setPool applies f's sender pool to a draft.
func setPool(ctx context.Context, q *store.Queries, accountID, id int64, f Fields, c *store.Campaign) error {
	if f.PoolID == nil {
		return nil
	}
	out, err := q.CampaignSetPool(ctx, store.CampaignSetPoolParams{AccountID: accountID, ID: id, PoolID: nonZero(f.PoolID)})
	if err != nil {
		return postgres.Error(err, "campaign")
	}
	out.TemplateID = c.TemplateID
	*c = out
	return nil
}

// setDeliverAtLocal applies f's local delivery time to a draft.
func setDeliverAtLocal(ctx context.Context, q *store.Queries, accountID, id int64, f Fields, c *store.Campaign) error {
	if f.DeliverAtLocal == nil {
		return nil
	}
	var at *string
	if *f.DeliverAtLocal != "" {
		at = f.DeliverAtLocal
	}
	out, err := q.CampaignSetDeliverAtLocal(ctx, store.CampaignSetDeliverAtLocalParams{AccountID: accountID, ID: id, DeliverAtLocal: at})
	if err != nil {
		return postgres.Error(err, "campaign")
	}
	out.TemplateID = c.TemplateID
	*c = out
	return nil
}

// setSendWindow applies f's sending window to a draft.
func setSendWindow(ctx context.Context, q *store.Queries, accountID, id int64, f Fields, c *store.Campaign) error {
	if f.SendWindow == nil && !f.ClearSendWindow {
		return nil
	}
	var raw []byte
	if f.SendWindow != nil {
		var err error
		if raw, err = json.Marshal(f.SendWindow); err != nil {
			return err
		}
	}
	out, err := q.CampaignSetSendWindow(ctx, store.CampaignSetSendWindowParams{AccountID: accountID, ID: id, SendWindow: raw})
	if err != nil {
		return postgres.Error(err, "campaign")
	}
	out.TemplateID = c.TemplateID
	*c = out
	return nil
}

// localTime is a deliver_at_local: HH:MM on a 24-hour clock.
var localTime = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// setEngagement applies f's tracking and archive switches to a draft.
func setEngagement(ctx context.Context, q *store.Queries, accountID, id int64, f Fields, c *store.Campaign) error {
	if !f.engagement() {
		return nil
	}
	out, err := q.CampaignSetEngagement(ctx, store.CampaignSetEngagementParams{AccountID: accountID, ID: id,
		TrackClicks: f.TrackClicks, TrackOpens: f.TrackOpens, Archive: f.Archive})
	if err != nil {
		return postgres.Error(err, "campaign")
	}
	out.TemplateID = c.TemplateID
	*c = out
	return nil
}

// inline reports whether f sets any of the campaign's own content.
func (f Fields) inline() bool {
	return f.Subject != nil || f.HTMLTemplate != nil || f.TextTemplate != nil
}

func fromStore(c store.Campaign) Campaign {
	return Campaign{ID: c.ID, Name: c.Name, Subject: c.Subject, FromEmail: c.FromEmail, FromName: c.FromName,
		ReplyTo: c.ReplyTo, HTMLTemplate: c.HtmlTemplate, TextTemplate: c.TextTemplate, Language: c.Language,
		ListIDs: c.ListIds, TemplateID: c.TemplateID, ContentType: c.ContentType, Markdown: c.Markdown, Blocks: c.Blocks, LayoutID: c.LayoutID, SegmentID: c.SegmentID, Status: c.Status, AmbiguousPolicy: c.AmbiguousPolicy, ScheduledFor: c.ScheduledFor,
		ApprovedAt: c.ApprovedAt, StartedAt: c.StartedAt, FinishedAt: c.FinishedAt, CancelledAt: c.CancelledAt,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, SenderID: c.SenderID, PoolID: c.PoolID, PausedReason: c.PausedReason, FailedReason: c.FailedReason,
		TrackClicks: c.TrackClicks, TrackOpens: c.TrackOpens, Archive: c.Archive,
		CreatedByType: c.CreatedByType, CreatedByID: c.CreatedByID, DeliverAtLocal: c.DeliverAtLocal,
		SendWindow: storedWindow(c.SendWindow)}
}

// storedWindow reads a stored sending window; one that does not parse (never
// written so: Fields are checked) reads as none.
func storedWindow(raw []byte) *sendwindow.Window {
	w, err := sendwindow.Parse(raw)
	if err != nil {
		return nil
	}
	return w
}

// normalize checks the fields that are set and rewrites addresses to their
// normalised form. Templates are checked by the caller once the full campaign is known.
func (s *Service) normalize(ctx context.Context, accountID int64, f *Fields) error {
	if f.Name != nil {
		n := strings.TrimSpace(*f.Name)
		if n == "" || len(n) > 200 {
			return apperr.Invalidf("/name", "name must be 1 to 200 characters")
		}
		f.Name = &n
	}
	if f.Subject != nil && strings.TrimSpace(*f.Subject) == "" {
		return apperr.Invalidf("/subject", "subject must not be empty")
	}
	if f.FromEmail != nil {
		a, err := address.Parse(*f.FromEmail)
		if err != nil {
			return apperr.Invalidf("/from_email", "%s", err.Error())
		}
		f.FromEmail = &a.Email
	}
	if f.ReplyTo != nil && *f.ReplyTo != "" {
		a, err := address.Parse(*f.ReplyTo)
		if err != nil {
			return apperr.Invalidf("/reply_to", "%s", err.Error())
		}
		f.ReplyTo = &a.Email
	}
	if f.FromName != nil && strings.ContainsAny(*f.FromName, "\r\n") {
		return apperr.Invalidf("/from_name", "from_name must be one line")
	}
	if f.AmbiguousPolicy != nil && *f.AmbiguousPolicy != "skip" && *f.AmbiguousPolicy != "retry" {
		return apperr.Invalidf("/ambiguous_policy", "ambiguous_policy must be skip or retry")
	}
	if f.DeliverAtLocal != nil && *f.DeliverAtLocal != "" && !localTime.MatchString(*f.DeliverAtLocal) {
		return apperr.Invalidf("/deliver_at_local", "deliver_at_local must be HH:MM on a 24-hour clock, such as 09:00")
	}
	if f.SendWindow != nil {
		if err := f.SendWindow.Check("/send_window"); err != nil {
			return err
		}
	}
	if f.TemplateID != nil {
		ok, err := store.New(s.pool).TemplateExists(ctx, store.TemplateExistsParams{AccountID: accountID, ID: *f.TemplateID})
		if err != nil {
			return err
		}
		if !ok {
			return apperr.Invalidf("/template_id", "template %d not found", *f.TemplateID)
		}
		if f.inline() {
			return errBoth
		}
	}
	if f.Attachments != nil {
		files, err := attachment.Check(*f.Attachments, "/attachments")
		if err != nil {
			return err
		}
		f.files = files
	}
	if f.SegmentID != nil && *f.SegmentID != 0 {
		owned, err := store.New(s.pool).SegmentIDOwned(ctx, store.SegmentIDOwnedParams{AccountID: accountID, ID: *f.SegmentID})
		if err != nil {
			return err
		}
		if !owned {
			return apperr.Invalidf("/segment_id", "segment %d not found", *f.SegmentID)
		}
	}
	if err := sender.CheckPool(ctx, store.New(s.pool), accountID, f.SenderID, f.PoolID, "/pool_id"); err != nil {
		return err
	}
	if f.SenderID != nil && *f.SenderID != 0 {
		if _, err := store.New(s.pool).SenderGet(ctx, store.SenderGetParams{AccountID: accountID, ID: *f.SenderID}); err != nil {
			if apperr.Is(postgres.Error(err, "sender"), apperr.NotFound) {
				return apperr.Invalidf("/sender_id", "sender %d not found", *f.SenderID)
			}
			return err
		}
	}
	if f.ListIDs != nil {
		ids := slices.Clone(*f.ListIDs)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		owned, err := store.New(s.pool).ListIDsOwned(ctx, store.ListIDsOwnedParams{AccountID: accountID, Ids: ids})
		if err != nil {
			return err
		}
		for i, id := range *f.ListIDs {
			if !slices.Contains(owned, id) {
				return apperr.Invalidf("/list_ids/"+strconv.Itoa(i), "list %d not found", id)
			}
		}
		f.ListIDs = &ids
	}
	return nil
}

// htmlPointers names the campaign's fields (html_template) in a content error.
func htmlPointers(err error) error {
	e, ok := err.(*apperr.Error)
	if !ok {
		return err
	}
	out := *e
	out.Fields = make([]apperr.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		if f.Pointer == "/html" {
			f.Pointer = "/html_template"
		}
		out.Fields[i] = f
	}
	return &out
}

// errBoth refuses a campaign given both a template and content of its own.
var errBoth = apperr.Invalidf("/template_id",
	"a campaign takes its content from template_id or from subject, html_template and text_template, not both")

// Create stores a draft. Its templates must parse and render against a sample
// subscriber; a campaign made from a template (TemplateID) has none of its own.
func (s *Service) Create(ctx context.Context, accountID int64, f Fields) (Campaign, error) {
	if err := s.normalize(ctx, accountID, &f); err != nil {
		return Campaign{}, err
	}
	if f.TemplateID == nil && f.Subject == nil {
		return Campaign{}, apperr.Invalidf("/subject", "subject is required unless the campaign names a template_id")
	}
	src, err := template.Content(template.Source{Type: "html"}, f.change())
	if err != nil {
		return Campaign{}, htmlPointers(err)
	}
	if template.Composed(src.Type) && f.TemplateID != nil {
		return Campaign{}, errBoth
	}
	if !template.Composed(src.Type) {
		subject, html, text := optional.Value(f.Subject), optional.Value(f.HTMLTemplate), optional.Value(f.TextTemplate)
		if err := render.Validate(subject, html, text); err != nil {
			return Campaign{}, err
		}
	}
	listIDs := []int64{}
	if f.ListIDs != nil {
		listIDs = *f.ListIDs
	}
	policy := "skip"
	if f.AmbiguousPolicy != nil {
		policy = *f.AmbiguousPolicy
	}
	// Who creates it is kept: four eyes (CampaignFourEyesBlocked) needs it.
	var createdByType *string
	var createdByID *int64
	if a, ok := access.ActorFrom(ctx); ok {
		createdByType, createdByID = &a.Type, &a.ID
	}
	var c store.Campaign
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if template.Composed(src.Type) {
			html, text, err := layout.ComposeContent(ctx, q, accountID, src.LayoutID, src.Type, src.Markdown, src.Blocks)
			if err != nil {
				return err
			}
			if err := render.Validate(optional.Value(f.Subject), html, text); err != nil {
				return template.SourceError(src.Type, err)
			}
			f.HTMLTemplate, f.TextTemplate = &html, &text
		}
		var err error
		c, err = q.CampaignCreate(ctx, store.CampaignCreateParams{
			AccountID: accountID, Name: optional.Value(f.Name), Subject: optional.Value(f.Subject),
			FromEmail: optional.Value(f.FromEmail), FromName: optional.Value(f.FromName), ReplyTo: optional.Value(f.ReplyTo),
			HtmlTemplate: optional.Value(f.HTMLTemplate), TextTemplate: optional.Value(f.TextTemplate),
			Language: optional.Value(f.Language), ListIds: listIDs, AmbiguousPolicy: policy,
			SegmentID:     nonZero(f.SegmentID),
			SenderID:      nonZero(f.SenderID),
			CreatedByType: createdByType, CreatedByID: createdByID,
		})
		if err != nil {
			return err
		}
		audit.SetTarget(ctx, strconv.FormatInt(c.ID, 10))
		if template.Composed(src.Type) {
			if c, err = q.CampaignSetContent(ctx, store.CampaignSetContentParams{AccountID: accountID, ID: c.ID,
				ContentType: src.Type, Markdown: src.Markdown, Blocks: src.Blocks, LayoutID: src.LayoutID}); err != nil {
				return err
			}
		}
		if err := setEngagement(ctx, q, accountID, c.ID, f, &c); err != nil {
			return err
		}
		if err := setDeliverAtLocal(ctx, q, accountID, c.ID, f, &c); err != nil {
			return err
		}
		if err := setSendWindow(ctx, q, accountID, c.ID, f, &c); err != nil {
			return err
		}
		if err := setPool(ctx, q, accountID, c.ID, f, &c); err != nil {
			return err
		}
		if err := storeAttachments(ctx, q, accountID, c.ID, f.files); err != nil {
			return err
		}
		if f.TemplateID == nil {
			return nil
		}
		c.TemplateID = f.TemplateID
		return q.CampaignSetTemplate(ctx, store.CampaignSetTemplateParams{AccountID: accountID, ID: c.ID, TemplateID: f.TemplateID})
	})
	if err != nil {
		return Campaign{}, postgres.Error(err, "campaign")
	}
	return s.withAttachments(ctx, accountID, fromStore(c))
}

// Get returns one campaign.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Campaign, error) {
	c, err := store.New(s.pool).CampaignGet(ctx, store.CampaignGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Campaign{}, postgres.Error(err, "campaign")
	}
	return s.withAttachments(ctx, accountID, fromStore(c))
}

// List returns up to limit campaigns after afterID in id order, optionally of one status.
func (s *Service) List(ctx context.Context, accountID, afterID int64, status *string, limit int) ([]Campaign, error) {
	rows, err := store.New(s.pool).CampaignList(ctx, store.CampaignListParams{AccountID: accountID, AfterID: afterID, Status: status, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Campaign, len(rows))
	for i, r := range rows {
		out[i] = fromStore(r)
	}
	return out, nil
}

// ListNewest returns up to limit campaigns before beforeID (0: from the newest),
// newest first, optionally of one status.
func (s *Service) ListNewest(ctx context.Context, accountID, beforeID int64, status *string, limit int) ([]Campaign, error) {
	rows, err := store.New(s.pool).CampaignListNewest(ctx, store.CampaignListNewestParams{AccountID: accountID, BeforeID: beforeID, Status: status, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Campaign, len(rows))
	for i, r := range rows {
		out[i] = fromStore(r)
	}
	return out, nil
}

// nonZero is nil for nil or 0.
func nonZero(p *int64) *int64 {
	if p == nil || *p == 0 {
		return nil
	}
	return p
}

// storeAttachments replaces the campaign's files with files, in q's transaction.
func storeAttachments(ctx context.Context, q *store.Queries, accountID, campaignID int64, files []provider.Attachment) error {
	if err := q.CampaignAttachmentDelete(ctx, store.CampaignAttachmentDeleteParams{AccountID: accountID, CampaignID: campaignID}); err != nil {
		return err
	}
	return attachment.Store(ctx, q, accountID, files, func(pos int32, a provider.Attachment, sum []byte) error {
		return q.CampaignAttachmentInsert(ctx, store.CampaignAttachmentInsertParams{CampaignID: campaignID, Position: pos,
			AccountID: accountID, Filename: a.Filename, ContentType: a.ContentType, ContentID: a.ContentID, Sha256: sum})
	})
}

// withAttachments fills c.Attachments.
func (s *Service) withAttachments(ctx context.Context, accountID int64, c Campaign) (Campaign, error) {
	var err error
	c.Attachments, err = attachment.Describe(ctx, store.New(s.pool), accountID, c.ID)
	return c, err
}
