package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// campaignReportCmd is `sendonce campaigns report ID`: the campaign's report
// (GET /v1/campaigns/{id}/report) as a table, or as JSON with --json.
func (a *App) campaignReportCmd() *cobra.Command {
	var domains int
	cmd := &cobra.Command{
		Use:     "report ID",
		Short:   "Show what happened to a campaign: outcomes, bounces, complaints, unsubscribes, opens, clicks, domains, links",
		Example: "  sendonce campaigns report 42 --domains 5",
		Args:    args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			resp, err := c.GetCampaignReportWithResponse(ctx, id, &client.GetCampaignReportParams{Domains: &domains})
			if err := client.Check(resp, err); err != nil {
				return answer{}, err
			}
			return answer{resp.JSON200, func(out io.Writer) error { return printReport(out, resp.JSON200) }}, nil
		}),
	}
	cmd.Flags().IntVar(&domains, "domains", 10, "recipient domains to list by messages sent (1 to 100); the rest are summed as other")
	return cmd
}

func engagementText(e client.ReportEngagement) string {
	return fmt.Sprintf("%d people (%d hits), %d recipients in all (%d hits, %d from suspected scanners)",
		e.PeopleUnique, e.People, e.Unique, e.Total, e.Scanners)
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", *v*100)
}

// printReport is a campaign's report for people: the counts, then the domains and links.
func printReport(out io.Writer, r *client.CampaignReport) error {
	fb, u := r.Feedback, r.Feedback.UnsubscribesBySource
	rows := [][]string{
		{"status", string(r.Status)}, {"audience", itoa(r.Audience)}, {"sent", itoa(r.Sent)},
		{"delivered", "not reported by the provider"}, {"failed", itoa(r.Failed)}, {"unknown", itoa(r.Unknown)},
		{"suppressed", itoa(r.Suppressed)}, {"pending", itoa(r.Pending)}, {"cancelled", itoa(r.Cancelled)},
		{"bounces", fmt.Sprintf("%d hard, %d soft", fb.HardBounces, fb.SoftBounces)},
		{"complaints", itoa(fb.Complaints)},
		{"unsubscribes", fmt.Sprintf("%d (one-click %d, preference page %d, provider %d)", fb.Unsubscribes,
			u.OneClick, u.Preferences, u.Provider)},
		{"opens", engagementText(r.Opens)}, {"clicks", engagementText(r.Clicks)},
		{"rates (of " + string(r.Rates.Basis) + ")", fmt.Sprintf("bounce %s, complaint %s, unsubscribe %s, open %s, click %s",
			pct(r.Rates.Bounce), pct(r.Rates.Complaint), pct(r.Rates.Unsubscribe), pct(r.Rates.Open), pct(r.Rates.Click))},
	}
	if err := table(out, []string{"FIELD", "VALUE"}, rows); err != nil {
		return err
	}
	fmt.Fprintln(out)
	rows = rows[:0]
	for _, d := range append(r.Domains, r.OtherDomains) {
		rows = append(rows, []string{d.Domain, itoa(d.Sent), itoa(d.Bounced), itoa(d.Complained), itoa(d.Unsubscribed),
			itoa(d.OpenedPeople), itoa(d.ClickedPeople)})
	}
	if err := table(out, []string{"DOMAIN", "SENT", "BOUNCED", "COMPLAINED", "UNSUBSCRIBED", "OPENED", "CLICKED"}, rows); err != nil {
		return err
	}
	if len(r.Links) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	rows = rows[:0]
	for _, l := range r.Links {
		rows = append(rows, []string{itoa(int64(l.Index)), l.Url, itoa(l.Clicks.PeopleUnique), itoa(l.Clicks.People),
			itoa(l.Clicks.Scanners)})
	}
	return table(out, []string{"LINK", "URL", "PEOPLE", "CLICKS", "SCANNER CLICKS"}, rows)
}
