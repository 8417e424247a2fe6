package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sendonce/sendonce/internal/abtest"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/render"
	"github.com/sendonce/sendonce/internal/store"
)

// abRound moves A/B tests on (docs/ab-tests.md): a test whose wait has run out
// gets its winner by its metric, a compare-and-set any replica may win once; then
// the held rest of every test with a winner is released to it, in short batches.
// A process killed anywhere in between leaves a state the next round (of any
// executor) carries on from: no winner yet (picked again, from the same counts at
// worst a little later), or a winner with rows still held (released again; the
// release touches only rows still held).
func (e *Executor) abRound(ctx context.Context) error {
	due, err := e.q.CampaignListWinnerDue(ctx, e.clk.DB())
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range due {
		if err := e.pickWinner(ctx, c); err != nil {
			errs = append(errs, fmt.Errorf("campaign %d: %w", c.ID, err))
		}
	}
	held, err := e.q.CampaignListRestHeld(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, c := range held {
		for ctx.Err() == nil {
			n, err := e.q.SendReleaseRest(ctx, store.SendReleaseRestParams{AccountID: c.AccountID, CampaignID: c.ID, Now: e.clk.DB()})
			if err != nil {
				errs = append(errs, fmt.Errorf("campaign %d: release the rest: %w", c.ID, err))
				break
			}
			if n == 0 {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// pickWinner chooses the leader of a test by its metric and records it, unless
// another replica (or a person) did first.
func (e *Executor) pickWinner(ctx context.Context, c store.CampaignListWinnerDueRow) error {
	rows, err := e.q.CampaignVariantReport(ctx, store.CampaignVariantReportParams{AccountID: c.AccountID, CampaignID: c.ID})
	if err != nil {
		return err
	}
	stats := make([]abtest.Stats, len(rows))
	for i, r := range rows {
		stats[i] = abtest.Stats{Variant: r.Variant, Sent: r.Sent, Opened: r.Opened, Clicked: r.Clicked}
	}
	metric := ""
	if c.AbMetric != nil {
		metric = *c.AbMetric
	}
	winner := abtest.Leader(stats, metric)
	_, err = e.q.CampaignWinnerSet(ctx, store.CampaignWinnerSetParams{AccountID: c.AccountID, ID: c.ID,
		Variant: winner, ChosenBy: "automatic", Now: e.clk.DB()})
	if postgres.NoRows(err) {
		return nil // chosen already, or the campaign moved on
	}
	if err == nil {
		e.log.Info("a/b winner chosen", "campaign_id", c.ID, "variant", abtest.Name(winner), "metric", metric)
	}
	return err
}

// untilWinnerDue is how long until the next automatic winner falls due (wait
// when none is).
func (e *Executor) untilWinnerDue(ctx context.Context, wait time.Duration) time.Duration {
	dueIn, err := e.q.CampaignWinnerNextDue(ctx, e.clk.DB())
	if err != nil {
		return wait
	}
	return min(max(time.Duration(dueIn)*time.Microsecond, 10*time.Millisecond), wait)
}

// prepareVariants parses an A/B campaign's variants (its own content fills what
// a variant leaves out). A variant that does not parse fails its recipients
// permanently, as the campaign's own template does.
func (e *Executor) prepareVariants(ctx context.Context, c *campaign) error {
	if c.AbVariants == nil {
		return nil
	}
	rows, err := e.q.CampaignVariantsForSend(ctx, store.CampaignVariantsForSendParams{AccountID: c.AccountID, CampaignID: c.ID})
	if err != nil {
		return err
	}
	c.variants = make(map[int16]variant, len(rows))
	for _, v := range rows {
		p, perr := e.cfg.Messages.Prepare(render.Campaign{TrackClicks: c.TrackClicks,
			FromEmail: c.FromEmail, FromName: v.FromName, ReplyTo: c.ReplyTo, Subject: v.Subject,
			HTML: v.HtmlTemplate, Text: v.TextTemplate})
		c.variants[v.Idx] = variant{tmpl: p, err: perr}
	}
	return nil
}

// variant is one parsed variant of an A/B campaign.
type variant struct {
	tmpl *render.Prepared
	err  error
}

// templateOf is what row r of c is rendered with: its recorded variant's
// templates, else the campaign's. A row of an A/B campaign with no variant
// recorded, or one the campaign does not have, is never sent with other content:
// it fails (the build records a variant on every row it makes claimable).
func (c *campaign) templateOf(r store.SendClaimBatchRow) (*render.Prepared, error) {
	if c.variants == nil {
		return c.tmpl, c.tmplErr
	}
	if r.Variant == nil {
		return nil, errors.New("a/b campaign row without a variant")
	}
	v, ok := c.variants[*r.Variant]
	if !ok {
		return nil, fmt.Errorf("a/b campaign has no variant %s", abtest.Name(*r.Variant))
	}
	return v.tmpl, v.err
}
