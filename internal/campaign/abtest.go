package campaign

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/abtest"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

// ABTest is a campaign's A/B test (docs/ab-tests.md): its settings, its variants
// and, in test mode, the winner once chosen.
type ABTest struct {
	Mode        string // abtest.ModeSplit or abtest.ModeTest
	TestPercent *int   // test mode: the test group's share of the audience
	WaitSeconds *int   // test mode: from the start until the winner is chosen
	Metric      *string
	Variants    []Variant
	Winner      *string // the winner's letter, once chosen
	WinnerAt    *time.Time
	ChosenBy    *string // automatic or manual
}

// Variant is one variant's content; nil fields take the campaign's own.
type Variant struct {
	Subject, FromName, HTMLTemplate, TextTemplate *string
	TemplateID                                    *int64
}

// VariantReport is one variant's outcome: messages sent, recipients who opened
// or clicked as people, their rates, and the p-value of its difference from the
// leader by the test's metric (clicks for a split).
type VariantReport struct {
	Variant                     string
	Recipients, Sent            int64
	Opened, Clicked             int64
	OpenRate, ClickRate, PValue float64
	Leader                      bool
}

// checkABTest validates t's settings and variants (the templates named must be
// the account's), naming the wrong field.
func (s *Service) checkABTest(ctx context.Context, accountID int64, t *ABTest) error {
	n := len(t.Variants)
	if n < abtest.MinVariants || n > abtest.MaxVariants {
		return apperr.Invalidf("/variants", "an A/B test has %d to %d variants", abtest.MinVariants, abtest.MaxVariants)
	}
	switch t.Mode {
	case abtest.ModeSplit:
		if t.TestPercent != nil || t.WaitSeconds != nil || t.Metric != nil {
			return apperr.Invalidf("/mode", "test_percent, wait_seconds and metric belong to mode test")
		}
	case abtest.ModeTest:
		if t.TestPercent == nil || *t.TestPercent < abtest.MinTestPercent || *t.TestPercent > abtest.MaxTestPercent {
			return apperr.Invalidf("/test_percent", "test_percent must be %d to %d", abtest.MinTestPercent, abtest.MaxTestPercent)
		}
		if t.WaitSeconds == nil || *t.WaitSeconds < abtest.MinWaitSeconds || *t.WaitSeconds > abtest.MaxWaitSeconds {
			return apperr.Invalidf("/wait_seconds", "wait_seconds must be %d to %d", abtest.MinWaitSeconds, abtest.MaxWaitSeconds)
		}
		if t.Metric == nil || !slices.Contains([]string{abtest.MetricClicks, abtest.MetricOpens, abtest.MetricManual}, *t.Metric) {
			return apperr.Invalidf("/metric", "metric must be clicks, opens or manual")
		}
	default:
		return apperr.Invalidf("/mode", "mode must be split or test")
	}
	q := store.New(s.pool)
	for i, v := range t.Variants {
		at := fmt.Sprintf("/variants/%d/", i)
		if v.TemplateID != nil {
			if v.Subject != nil || v.HTMLTemplate != nil || v.TextTemplate != nil {
				return apperr.Invalidf(at+"template_id", "a variant takes its content from template_id or from its own subject and templates, not both")
			}
			ok, err := q.TemplateExists(ctx, store.TemplateExistsParams{AccountID: accountID, ID: *v.TemplateID})
			if err != nil {
				return err
			}
			if !ok {
				return apperr.Invalidf(at+"template_id", "template %d not found", *v.TemplateID)
			}
		}
		if v.Subject != nil && strings.TrimSpace(*v.Subject) == "" {
			return apperr.Invalidf(at+"subject", "subject must not be empty")
		}
		if v.FromName != nil && strings.ContainsAny(*v.FromName, "\r\n") {
			return apperr.Invalidf(at+"from_name", "from_name must be one line")
		}
		subject, html, text := "x", "", "x"
		if v.Subject != nil {
			subject = *v.Subject
		}
		if v.HTMLTemplate != nil {
			html = *v.HTMLTemplate
		}
		if v.TextTemplate != nil {
			text = *v.TextTemplate
		}
		if err := render.Validate(subject, html, text); err != nil {
			return apperr.Invalidf(at+"html_template", "%s", err.Error())
		}
	}
	return nil
}

// SetABTest makes a draft campaign an A/B test, or replaces its test; a campaign
// past draft is a 409 and nothing changes.
func (s *Service) SetABTest(ctx context.Context, accountID, id int64, t ABTest) (ABTest, error) {
	if err := s.checkABTest(ctx, accountID, &t); err != nil {
		return ABTest{}, err
	}
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		n := int16(len(t.Variants))
		arg := store.CampaignABSetParams{AccountID: accountID, ID: id, Mode: &t.Mode, Variants: &n, Metric: t.Metric}
		if t.TestPercent != nil {
			p := int16(*t.TestPercent)
			arg.TestPercent = &p
		}
		if t.WaitSeconds != nil {
			w := int32(*t.WaitSeconds)
			arg.WaitSeconds = &w
		}
		if err := s.draftOnly(ctx, q, accountID, id, func() error { _, err := q.CampaignABSet(ctx, arg); return err }); err != nil {
			return err
		}
		if err := q.CampaignVariantsDelete(ctx, store.CampaignVariantsDeleteParams{AccountID: accountID, CampaignID: id}); err != nil {
			return err
		}
		for i, v := range t.Variants {
			if err := q.CampaignVariantInsert(ctx, store.CampaignVariantInsertParams{AccountID: accountID, CampaignID: id,
				Idx: int16(i + 1), Subject: v.Subject, FromName: v.FromName, HtmlTemplate: v.HTMLTemplate,
				TextTemplate: v.TextTemplate, TemplateID: v.TemplateID}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ABTest{}, err
	}
	return s.GetABTest(ctx, accountID, id)
}

// ClearABTest makes a draft campaign an ordinary one again.
func (s *Service) ClearABTest(ctx context.Context, accountID, id int64) error {
	return postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := s.draftOnly(ctx, q, accountID, id, func() error {
			_, err := q.CampaignABSet(ctx, store.CampaignABSetParams{AccountID: accountID, ID: id})
			return err
		}); err != nil {
			return err
		}
		return q.CampaignVariantsDelete(ctx, store.CampaignVariantsDeleteParams{AccountID: accountID, CampaignID: id})
	})
}

// draftOnly runs a change that touches only a draft: no row means no such
// campaign (404) or one past draft (409 with its status).
func (s *Service) draftOnly(ctx context.Context, q *store.Queries, accountID, id int64, change func() error) error {
	err := postgres.Error(change(), "campaign")
	if apperr.Is(err, apperr.NotFound) {
		status, serr := q.CampaignStatusGet(ctx, store.CampaignStatusGetParams{AccountID: accountID, ID: id})
		if serr != nil {
			return postgres.Error(serr, "campaign")
		}
		return &apperr.Error{Code: apperr.Conflict, Message: "an A/B test changes only while the campaign is a draft; it is " + status,
			Extra: map[string]any{"current_status": status}}
	}
	return err
}

// GetABTest reads a campaign's A/B test; a campaign that is not one is a 404.
func (s *Service) GetABTest(ctx context.Context, accountID, id int64) (ABTest, error) {
	q := store.New(s.pool)
	c, err := q.CampaignGet(ctx, store.CampaignGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return ABTest{}, postgres.Error(err, "campaign")
	}
	if c.AbMode == nil {
		return ABTest{}, apperr.New(apperr.NotFound, "campaign %d has no A/B test", id)
	}
	t := ABTest{Mode: *c.AbMode, Metric: c.AbMetric, WinnerAt: c.AbWinnerAt, ChosenBy: c.AbWinnerBy}
	if c.AbTestPercent != nil {
		p := int(*c.AbTestPercent)
		t.TestPercent = &p
	}
	if c.AbWaitSeconds != nil {
		w := int(*c.AbWaitSeconds)
		t.WaitSeconds = &w
	}
	if c.AbWinner != nil {
		w := abtest.Name(*c.AbWinner)
		t.Winner = &w
	}
	vs, err := q.CampaignVariantsList(ctx, store.CampaignVariantsListParams{AccountID: accountID, CampaignID: id})
	if err != nil {
		return ABTest{}, err
	}
	for _, v := range vs {
		t.Variants = append(t.Variants, Variant{Subject: v.Subject, FromName: v.FromName, HTMLTemplate: v.HtmlTemplate,
			TextTemplate: v.TextTemplate, TemplateID: v.TemplateID})
	}
	return t, nil
}

// VariantsReport reports an A/B campaign's variants: counts, rates (people only)
// and a two-proportion z-test of each against the leader by the test's metric.
func (s *Service) VariantsReport(ctx context.Context, accountID, id int64) (ABTest, []VariantReport, error) {
	t, err := s.GetABTest(ctx, accountID, id)
	if err != nil {
		return ABTest{}, nil, err
	}
	rows, err := store.New(s.pool).CampaignVariantReport(ctx, store.CampaignVariantReportParams{AccountID: accountID, CampaignID: id})
	if err != nil {
		return ABTest{}, nil, err
	}
	metric := abtest.MetricClicks
	if t.Metric != nil && *t.Metric == abtest.MetricOpens {
		metric = abtest.MetricOpens
	}
	stats := make([]abtest.Stats, len(rows))
	for i, r := range rows {
		stats[i] = abtest.Stats{Variant: r.Variant, Sent: r.Sent, Opened: r.Opened, Clicked: r.Clicked}
	}
	lead := abtest.Leader(stats, metric)
	var leader abtest.Stats
	for _, st := range stats {
		if st.Variant == lead {
			leader = st
		}
	}
	out := make([]VariantReport, len(rows))
	for i, r := range rows {
		st := stats[i]
		out[i] = VariantReport{Variant: abtest.Name(r.Variant), Recipients: r.Recipients, Sent: r.Sent,
			Opened: r.Opened, Clicked: r.Clicked, OpenRate: st.Rate(abtest.MetricOpens), ClickRate: st.Rate(abtest.MetricClicks),
			PValue: 1, Leader: r.Variant == lead}
		if r.Variant != lead {
			out[i].PValue = abtest.PValue(leader.Hits(metric), leader.Sent, st.Hits(metric), st.Sent)
		}
	}
	return t, out, nil
}

// ChooseWinner records a person's choice of the winner of a test campaign that
// is sending or paused, once: a compare-and-set, so a second choice, or one after
// the scheduler's, is a 409 and changes nothing. The executors are woken to
// release the rest of the audience to it.
func (s *Service) ChooseWinner(ctx context.Context, accountID, id int64, variant string) (ABTest, error) {
	idx := abtest.Index(variant)
	if idx == 0 {
		return ABTest{}, apperr.Invalidf("/variant", "variant must be a letter A to E")
	}
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		c, err := q.CampaignGet(ctx, store.CampaignGetParams{AccountID: accountID, ID: id})
		if err != nil {
			return postgres.Error(err, "campaign")
		}
		if c.AbMode == nil || *c.AbMode != abtest.ModeTest {
			return &apperr.Error{Code: apperr.Conflict, Message: "only an A/B test in test mode has a winner to choose"}
		}
		if c.AbVariants != nil && idx > *c.AbVariants {
			return apperr.Invalidf("/variant", "the campaign has no variant %s", variant)
		}
		_, err = q.CampaignWinnerSet(ctx, store.CampaignWinnerSetParams{AccountID: accountID, ID: id, Variant: idx, ChosenBy: "manual"})
		if postgres.NoRows(err) {
			if c.AbWinner != nil {
				return &apperr.Error{Code: apperr.Conflict, Message: "the winner is chosen already: " + abtest.Name(*c.AbWinner),
					Extra: map[string]any{"winner": abtest.Name(*c.AbWinner)}}
			}
			return &apperr.Error{Code: apperr.Conflict, Message: "a winner is chosen only while the campaign is sending or paused; it is " + c.Status,
				Extra: map[string]any{"current_status": c.Status}}
		}
		if err != nil {
			return err
		}
		return notify(ctx, q, id)
	})
	if err != nil {
		return ABTest{}, err
	}
	return s.GetABTest(ctx, accountID, id)
}

// approveVariants, in the approval's transaction, freezes the variants' templates
// and checks each variant as it will be sent: its templates render, and with
// click tracking on it carries the same tracked links as the campaign (the
// links are stored once per campaign, by position).
func approveVariants(ctx context.Context, q *store.Queries, c store.Campaign) error {
	if c.AbMode == nil {
		return nil
	}
	// A test group's winner releases the rest at once, which a time of delivery
	// in each recipient's zone would contradict: the two do not combine.
	if *c.AbMode == "test" && c.DeliverAtLocal != nil {
		return apperr.Invalidf("/deliver_at_local", "an A/B test with a test group and a local delivery time do not combine: "+
			"the winner goes to the rest as soon as it is chosen; split the audience instead, or drop the local time")
	}
	if err := q.CampaignVariantsFreezeTemplates(ctx, store.CampaignVariantsFreezeTemplatesParams{AccountID: c.AccountID, CampaignID: c.ID}); err != nil {
		return err
	}
	vs, err := q.CampaignVariantsForSend(ctx, store.CampaignVariantsForSendParams{AccountID: c.AccountID, CampaignID: c.ID})
	if err != nil {
		return err
	}
	links := render.TrackableLinks(c.HtmlTemplate)
	for i, v := range vs {
		at := fmt.Sprintf("/variants/%d/", i)
		if err := render.Validate(v.Subject, v.HtmlTemplate, v.TextTemplate); err != nil {
			return apperr.Invalidf(at+"html_template", "%s", err.Error())
		}
		if c.TrackClicks && !slices.Equal(render.TrackableLinks(v.HtmlTemplate), links) {
			return apperr.Invalidf(at+"html_template",
				"with click tracking on, every variant's HTML carries the same links as the campaign's, in the same order")
		}
	}
	return nil
}
