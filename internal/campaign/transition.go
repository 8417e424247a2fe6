package campaign

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/layout"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/template"
)

// cas runs one compare-and-set update in a transaction, then after (same transaction)
// on the row it returned, which after may replace, then records the event evType
// reports (none when empty) in the same transaction. Zero rows means the campaign is
// not the account's (404) or is not in a state the change applies to (409 carrying
// current_status). An error from after rolls the change back, event included.
func (s *Service) cas(ctx context.Context, accountID, id int64, what, evType string,
	update func(*store.Queries) (store.Campaign, error), after func(*store.Queries, *store.Campaign) error) (Campaign, error) {
	var out store.Campaign
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		c, err := update(q)
		if err = postgres.Error(err, "campaign"); apperr.Is(err, apperr.NotFound) {
			status, serr := q.CampaignStatusGet(ctx, store.CampaignStatusGetParams{AccountID: accountID, ID: id})
			if serr != nil {
				return postgres.Error(serr, "campaign")
			}
			return &apperr.Error{Code: apperr.Conflict,
				Message: "cannot " + what + " a campaign that is " + status,
				Extra:   map[string]any{"current_status": status}}
		}
		if err != nil {
			return err
		}
		out = c
		if after != nil {
			if err := after(q, &out); err != nil {
				return err
			}
		}
		if evType == "" {
			return nil
		}
		data := map[string]any{"campaign_id": out.ID, "name": out.Name, "status": out.Status}
		// Who did it travels with what was done (absent for the system's own changes).
		if a, ok := access.ActorFrom(ctx); ok {
			data["actor"] = a
		}
		return event.Emit(ctx, tx, accountID, evType, data)
	})
	if err != nil {
		return Campaign{}, err
	}
	return fromStore(out), nil
}

// setMarkdown applies a change of content type, Markdown, design or layout to
// the draft c (in q's transaction) and composes Markdown or block content in its
// layout. It reports whether c's content is composed.
func setMarkdown(ctx context.Context, q *store.Queries, accountID int64, f Fields, c *store.Campaign) (bool, error) {
	if f.ContentType == nil && f.Markdown == nil && f.Blocks == nil && f.LayoutID == nil && !template.Composed(c.ContentType) {
		return false, nil
	}
	src, err := template.Content(template.Source{Type: c.ContentType, Markdown: c.Markdown, Blocks: c.Blocks, LayoutID: c.LayoutID}, f.change())
	if err != nil {
		return false, htmlPointers(err)
	}
	composed := template.Composed(src.Type)
	if composed && c.TemplateID != nil {
		return false, errBoth
	}
	var html, text string
	if composed {
		if html, text, err = layout.ComposeContent(ctx, q, accountID, src.LayoutID, src.Type, src.Markdown, src.Blocks); err != nil {
			return false, err
		}
	}
	row, err := q.CampaignSetContent(ctx, store.CampaignSetContentParams{AccountID: accountID, ID: c.ID,
		ContentType: src.Type, Markdown: src.Markdown, Blocks: src.Blocks, LayoutID: src.LayoutID})
	if err != nil {
		return false, postgres.Error(err, "campaign")
	}
	if composed {
		if err := q.CampaignSetComposed(ctx, store.CampaignSetComposedParams{AccountID: accountID, ID: c.ID, Html: html, Text: text}); err != nil {
			return false, err
		}
		row.HtmlTemplate, row.TextTemplate = html, text
	}
	*c = row
	return composed, nil
}

// validateTemplates renders the stored templates against the sample subscriber. A
// draft made from a template has no content of its own to check until approval.
func validateTemplates(c store.Campaign) error {
	if c.TemplateID != nil && c.Status == StatusDraft {
		return nil
	}
	return render.Validate(c.Subject, c.HtmlTemplate, c.TextTemplate)
}

func notify(ctx context.Context, q *store.Queries, id int64) error {
	return q.CampaignNotify(ctx, store.CampaignNotifyParams{Channel: postgres.CampaignChannel, Payload: strconv.FormatInt(id, 10)})
}

// Update changes a draft. The templates are validated as stored after the change, so
// a patch of one template is checked together with the others. A patch of archive
// alone applies in any status (SetArchive); any other field of a campaign that is
// no longer a draft is a 409.
func (s *Service) Update(ctx context.Context, accountID, id int64, f Fields) (Campaign, error) {
	if f.onlyArchive() {
		return s.SetArchive(ctx, accountID, id, *f.Archive)
	}
	if err := s.normalize(ctx, accountID, &f); err != nil {
		return Campaign{}, err
	}
	arg := store.CampaignUpdateDraftParams{AccountID: accountID, ID: id, Name: f.Name, Subject: f.Subject,
		FromEmail: f.FromEmail, FromName: f.FromName, ReplyTo: f.ReplyTo, HtmlTemplate: f.HTMLTemplate,
		TextTemplate: f.TextTemplate, Language: f.Language, AmbiguousPolicy: f.AmbiguousPolicy,
		SenderID: f.SenderID, SegmentID: f.SegmentID}
	if f.ListIDs != nil {
		arg.ListIds = *f.ListIDs
		if arg.ListIds == nil {
			arg.ListIds = []int64{}
		}
	}
	c, err := s.cas(ctx, accountID, id, "edit", "",
		func(q *store.Queries) (store.Campaign, error) { return q.CampaignUpdateDraft(ctx, arg) },
		func(q *store.Queries, c *store.Campaign) error {
			if err := setEngagement(ctx, q, accountID, id, f, c); err != nil {
				return err
			}
			if err := setDeliverAtLocal(ctx, q, accountID, id, f, c); err != nil {
				return err
			}
			if err := setSendWindow(ctx, q, accountID, id, f, c); err != nil {
				return err
			}
			if err := setPool(ctx, q, accountID, id, f, c); err != nil {
				return err
			}
			if f.Attachments != nil {
				if err := storeAttachments(ctx, q, accountID, id, f.files); err != nil {
					return err
				}
			}
			if f.TemplateID != nil {
				if err := q.CampaignSetTemplate(ctx, store.CampaignSetTemplateParams{AccountID: accountID, ID: id, TemplateID: f.TemplateID}); err != nil {
					return err
				}
				c.TemplateID = f.TemplateID
			} else if c.TemplateID != nil && f.inline() {
				return errBoth
			}
			markdown, err := setMarkdown(ctx, q, accountID, f, c)
			if err != nil {
				return err
			}
			if err := validateTemplates(*c); err != nil && markdown {
				return template.SourceError(c.ContentType, err)
			} else if err != nil {
				return err
			}
			return nil
		})
	if err != nil {
		return c, err
	}
	return s.withAttachments(ctx, accountID, c)
}

// SetArchive publishes the campaign in the account's web archive (or withdraws
// it), whatever its status: what it sent does not change.
func (s *Service) SetArchive(ctx context.Context, accountID, id int64, archive bool) (Campaign, error) {
	var out store.Campaign
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		out, err = store.New(tx).CampaignSetArchive(ctx, store.CampaignSetArchiveParams{AccountID: accountID, ID: id, Archive: archive})
		return postgres.Error(err, "campaign")
	})
	if err != nil {
		return Campaign{}, err
	}
	return s.withAttachments(ctx, accountID, fromStore(out))
}

// Delete removes a draft.
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	_, err := s.cas(ctx, accountID, id, "delete", "",
		func(q *store.Queries) (store.Campaign, error) {
			n, err := q.CampaignDeleteDraft(ctx, store.CampaignDeleteDraftParams{AccountID: accountID, ID: id})
			if err == nil && n == 0 {
				err = apperr.New(apperr.NotFound, "campaign not found")
			}
			return store.Campaign{}, err
		}, nil)
	return err
}

// Approve moves a draft to approved, to start at scheduledFor (nil: now). A
// campaign made from a template gets the template's content copied in, in the same
// transaction: what it sends is frozen here, and later edits of the template do not
// reach it. The templates are validated once more, and the executors are woken on commit.
func (s *Service) Approve(ctx context.Context, accountID, id int64, scheduledFor *time.Time) (Campaign, error) {
	return s.approve(ctx, accountID, id, scheduledFor, nil)
}

// Checked is the From and sender a check made before approval saw.
type Checked struct {
	FromEmail string
	SenderID  *int64
}

// ApproveChecked approves as Approve does, but only while the campaign still has
// the From and sender that checked names: a draft edited since the check (its
// From domain unchecked) is a 409 and stays a draft.
func (s *Service) ApproveChecked(ctx context.Context, accountID, id int64, scheduledFor *time.Time, checked Checked) (Campaign, error) {
	c, err := s.approve(ctx, accountID, id, scheduledFor, &checked)
	var ae *apperr.Error
	if errors.As(err, &ae) && ae.Code == apperr.Conflict && ae.Extra["current_status"] == StatusDraft {
		return c, &apperr.Error{Code: apperr.Conflict, Extra: ae.Extra,
			Message: "the campaign's from_email or sender_id changed while its From domain was being checked: approve again"}
	}
	return c, err
}

func (s *Service) approve(ctx context.Context, accountID, id int64, scheduledFor *time.Time, checked *Checked) (Campaign, error) {
	arg := store.CampaignApproveParams{AccountID: accountID, ID: id, ScheduledFor: scheduledFor}
	if checked != nil {
		arg.Guarded, arg.CheckedFrom, arg.CheckedSenderID = true, checked.FromEmail, checked.SenderID
	}
	return s.cas(ctx, accountID, id, "approve", event.CampaignApproved,
		func(q *store.Queries) (store.Campaign, error) { return q.CampaignApprove(ctx, arg) },
		func(q *store.Queries, c *store.Campaign) error {
			if c.TemplateID != nil {
				frozen, err := q.CampaignFreezeTemplate(ctx, store.CampaignFreezeTemplateParams{AccountID: accountID, ID: id})
				if err != nil {
					return postgres.Error(err, "campaign")
				}
				// Its files too, unless it has its own.
				if _, err := q.CampaignAttachmentCopyTemplate(ctx, store.CampaignAttachmentCopyTemplateParams{
					AccountID: accountID, CampaignID: id, TemplateID: *c.TemplateID}); err != nil {
					return err
				}
				*c = frozen
			}
			if err := checkFourEyes(ctx, q, accountID, id); err != nil {
				return err
			}
			if c.HtmlTemplate == "" && c.TextTemplate == "" {
				return apperr.Invalidf("/html_template", "a campaign needs an html or a text template before it is approved")
			}
			if err := validateTemplates(*c); err != nil {
				return err
			}
			if err := approveVariants(ctx, q, *c); err != nil {
				return err
			}
			if err := checkSenderFrom(ctx, q, *c); err != nil {
				return err
			}
			if err := storeTrackedLinks(ctx, q, *c); err != nil {
				return err
			}
			return notify(ctx, q, c.ID)
		})
}

// checkFourEyes refuses the approval when the account requires four eyes and the
// approving actor created the campaign. It runs after the approval's
// compare-and-set, in its transaction, so a refusal rolls the approval back and a
// concurrent change of the setting is seen as of this transaction.
func checkFourEyes(ctx context.Context, q *store.Queries, accountID, id int64) error {
	a, ok := access.ActorFrom(ctx)
	if !ok {
		return nil
	}
	blocked, err := q.CampaignFourEyesBlocked(ctx, store.CampaignFourEyesBlockedParams{
		ActorType: a.Type, ActorID: a.ID, AccountID: accountID, ID: id})
	if err != nil {
		return postgres.Error(err, "campaign")
	}
	if blocked {
		return &apperr.Error{Code: apperr.Forbidden, Extra: map[string]any{"reason": "four_eyes"},
			Message: "this account requires four eyes: a campaign must be approved by someone other than its creator"}
	}
	return nil
}

// storeTrackedLinks stores the URLs click tracking rewrites, once for the
// campaign, from the content frozen by this approval; the executor numbers the
// links of the same frozen template the same way (render.TrackableLinks).
func storeTrackedLinks(ctx context.Context, q *store.Queries, c store.Campaign) error {
	if err := q.TrackedLinksDelete(ctx, store.TrackedLinksDeleteParams{AccountID: c.AccountID, CampaignID: c.ID}); err != nil {
		return err
	}
	if !c.TrackClicks {
		return nil
	}
	urls := render.TrackableLinks(c.HtmlTemplate)
	if len(urls) == 0 {
		return nil
	}
	return q.TrackedLinksInsert(ctx, store.TrackedLinksInsertParams{AccountID: c.AccountID, CampaignID: c.ID, Urls: urls})
}

// checkSenderFrom refuses a From that the campaign's sender does not allow.
// A campaign on a sender pool is held to the rules of every sender of the pool:
// its rows may leave through any of them.
func checkSenderFrom(ctx context.Context, q *store.Queries, c store.Campaign) error {
	if c.PoolID != nil {
		return sender.CheckPoolFrom(ctx, q, c.AccountID, *c.PoolID, c.FromEmail, "/from_email")
	}
	_, err := sender.CheckFrom(ctx, q, c.AccountID, c.SenderID, c.FromEmail, "/from_email")
	return err
}

// Unapprove moves an approved campaign that has not started back to draft.
func (s *Service) Unapprove(ctx context.Context, accountID, id int64) (Campaign, error) {
	return s.cas(ctx, accountID, id, "unapprove", "",
		func(q *store.Queries) (store.Campaign, error) {
			return q.CampaignUnapprove(ctx, store.CampaignUnapproveParams{AccountID: accountID, ID: id})
		}, nil)
}

// Pause stops a sending campaign from claiming more recipients.
func (s *Service) Pause(ctx context.Context, accountID, id int64) (Campaign, error) {
	return s.cas(ctx, accountID, id, "pause", event.CampaignPaused,
		func(q *store.Queries) (store.Campaign, error) {
			return q.CampaignPause(ctx, store.CampaignPauseParams{AccountID: accountID, ID: id})
		}, nil)
}

// Resume sets a paused campaign sending again and wakes the executors.
func (s *Service) Resume(ctx context.Context, accountID, id int64) (Campaign, error) {
	return s.cas(ctx, accountID, id, "resume", event.CampaignResumed,
		func(q *store.Queries) (store.Campaign, error) {
			return q.CampaignResume(ctx, store.CampaignResumeParams{AccountID: accountID, ID: id})
		},
		func(q *store.Queries, c *store.Campaign) error {
			if err := q.SenderResumeHealth(ctx, store.SenderResumeHealthParams{AccountID: accountID, SenderID: c.SenderID}); err != nil {
				return err
			}
			// A complaint-rate pause ends the same way: the operator decided.
			if err := q.ComplaintGuardClearForCampaign(ctx, store.ComplaintGuardClearForCampaignParams{AccountID: accountID, CampaignID: c.ID}); err != nil {
				return err
			}
			return notify(ctx, q, c.ID)
		})
}

// Cancel ends a campaign that has not finished. The cancel's own transaction
// changes the campaign row (and writes its event) only: from its commit no queued
// row is claimed, since only sending campaigns are. The queued rows are then closed
// in bounded batches, each its own short transaction (CloseCancelled): a
// transaction that grows with the campaign would hold back every account's event
// readers, which wait below the oldest running transaction. What this request does
// not close (it was cut short, its process killed) the executors' maintenance does.
func (s *Service) Cancel(ctx context.Context, accountID, id int64) (Campaign, error) {
	c, err := s.cas(ctx, accountID, id, "cancel", event.CampaignCancelled,
		func(q *store.Queries) (store.Campaign, error) {
			return q.CampaignCancel(ctx, store.CampaignCancelParams{AccountID: accountID, ID: id})
		}, nil)
	if err != nil {
		return c, err
	}
	// The cancel has committed: a failure here leaves rows that are never claimed
	// and that the maintenance sweep closes, so it does not fail the request.
	_, _ = CloseCancelled(ctx, store.New(s.pool), accountID, c.ID, nil)
	return c, nil
}

// DeleteFailed deletes the rows a failed campaign's build had queued, one bounded
// batch per statement (each committing on its own), until none is left, and
// returns how many it deleted. The fail itself (CampaignFail) changes the campaign
// row only, for the reason CloseCancelled's cancel does.
func DeleteFailed(ctx context.Context, q *store.Queries, accountID, campaignID int64) (int64, error) {
	var total int64
	for {
		n, err := q.SendDeleteFailed(ctx, store.SendDeleteFailedParams{AccountID: accountID, CampaignID: campaignID})
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// CloseCancelled closes the queued rows of a cancelled campaign, one bounded batch
// per statement (each committing on its own), until none is left, and returns how
// many it closed. now is the caller's clock (nil: the database's).
func CloseCancelled(ctx context.Context, q *store.Queries, accountID, campaignID int64, now *time.Time) (int64, error) {
	var total int64
	for {
		n, err := q.SendSweepCancelled(ctx, store.SendSweepCancelledParams{Now: now, AccountID: accountID, CampaignID: campaignID})
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// RetryFailed re-queues a sent campaign's failed recipients, once per campaign:
// the campaign goes back to sending (a compare-and-set that also stamps it, so a
// second call is a 409) and its failed rows become queued with the same job ids,
// sent again under the claim's exclusions (suppressions, unconfirmed subscribers,
// left lists). Rows of unknown outcome are not retried: the provider may have
// delivered them, and a second copy is what sendonce exists to prevent. A
// campaign with no failed row is a 409 and changes nothing. It returns the
// campaign and how many rows were re-queued.
func (s *Service) RetryFailed(ctx context.Context, accountID, id int64) (Campaign, int64, error) {
	var requeued int64
	c, err := s.cas(ctx, accountID, id, "retry the failed recipients of", "",
		func(q *store.Queries) (store.Campaign, error) {
			return q.CampaignRetryFailedBegin(ctx, store.CampaignRetryFailedBeginParams{AccountID: accountID, ID: id})
		},
		func(q *store.Queries, c *store.Campaign) error {
			n, err := q.SendRequeueFailed(ctx, store.SendRequeueFailedParams{AccountID: accountID, CampaignID: c.ID})
			if err != nil {
				return err
			}
			if n == 0 {
				return &apperr.Error{Code: apperr.Conflict, Message: "the campaign has no failed recipients to retry",
					Extra: map[string]any{"current_status": StatusSent}}
			}
			requeued = n
			return notify(ctx, q, c.ID)
		})
	if err != nil {
		return Campaign{}, 0, err
	}
	return c, requeued, nil
}

// Duplicate makes a new draft of the account's campaign id with everything but
// its sends and history (content, with its type, source and layout, template,
// lists, segment, sender, policy, tracking switches, attachments), named
// "<name> (copy)". Any status can be duplicated; another account's campaign is
// not found.
func (s *Service) Duplicate(ctx context.Context, accountID, id int64) (Campaign, error) {
	var c store.Campaign
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		if c, err = q.CampaignDuplicate(ctx, store.CampaignDuplicateParams{AccountID: accountID, ID: id}); err != nil {
			return postgres.Error(err, "campaign")
		}
		if template.Composed(c.ContentType) {
			// The original's html may be what approval pinned, in its layout as it
			// was then: the new draft is composed in the layout as it is now.
			html, text, err := layout.ComposeContent(ctx, q, accountID, c.LayoutID, c.ContentType, c.Markdown, c.Blocks)
			if err != nil {
				return err
			}
			if err := q.CampaignSetComposed(ctx, store.CampaignSetComposedParams{AccountID: accountID, ID: c.ID, Html: html, Text: text}); err != nil {
				return err
			}
			c.HtmlTemplate, c.TextTemplate = html, text
		}
		return q.CampaignAttachmentsCopy(ctx, store.CampaignAttachmentsCopyParams{ToID: c.ID, AccountID: accountID, FromID: id})
	})
	if err != nil {
		return Campaign{}, err
	}
	return s.withAttachments(ctx, accountID, fromStore(c))
}
