package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// campaignStatuses are the API's CampaignStatus enum, in the order of a campaign's
// life (a test holds them equal to openapi.yaml's).
var campaignStatuses = []string{
	string(client.CampaignStatusDraft), string(client.CampaignStatusApproved), string(client.CampaignStatusBuilding),
	string(client.CampaignStatusSending), string(client.CampaignStatusPaused), string(client.CampaignStatusSent),
	string(client.CampaignStatusCancelled), string(client.CampaignStatusFailed),
}

func (a *App) campaignsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "campaigns", Short: "List, show, approve and control campaigns"}

	var status string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the account's campaigns",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			var params client.ListCampaignsParams
			if status != "" {
				params.Status = client.Ptr(client.CampaignStatus(status))
			}
			var all []client.Campaign
			for camp, err := range c.Campaigns.Iter(cmd.Context(), params) {
				if err != nil {
					return err
				}
				all = append(all, camp)
			}
			return printList(a, cmd.OutOrStdout(), all, []string{"ID", "NAME", "STATUS", "CREATED", "FINISHED"},
				func(camp client.Campaign) []string {
					return []string{itoa(camp.Id), camp.Name, string(camp.Status), when(&camp.CreatedAt), when(camp.FinishedAt)}
				})
		},
	}
	list.Flags().StringVar(&status, "status", "", "only campaigns in this status ("+strings.Join(campaignStatuses, ", ")+")")
	_ = list.RegisterFlagCompletionFunc("status", cobra.FixedCompletions(campaignStatuses, cobra.ShellCompDirectiveNoFileComp))

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a campaign and the counts of its sends",
		Args:  args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			camp, err := c.GetCampaignWithResponse(ctx, id)
			if err := client.Check(camp, err); err != nil {
				return answer{}, err
			}
			stats, err := campaignStats(ctx, c, id)
			if err != nil {
				return answer{}, err
			}
			return answer{map[string]any{"campaign": camp.JSON200, "stats": stats}, func(out io.Writer) error {
				return printCampaignFields(out, camp.JSON200, stats)
			}}, nil
		}),
	}

	var watch bool
	approve := &cobra.Command{
		Use:   "approve ID",
		Short: "Approve a draft campaign (it starts sending at once); --watch follows it to the end",
		Long: `Approve a draft campaign: it starts sending at once. With --watch the command follows the
campaign through the event stream until it is sent or cancelled: a progress bar on a terminal
(sent, queued, failed, the rate and the time left), a line per second in a pipe, and the final
counts. It exits 6 when the campaign ends cancelled or with failed or unknown sends.`,
		Example: "  sendonce campaigns approve 42 --watch",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID(argv[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			var after string
			if watch {
				// Where the event log ends now, so the stream misses none of this campaign's events.
				if after, err = logEnd(cmd.Context(), c); err != nil {
					return err
				}
			}
			resp, err := c.ApproveCampaignWithResponse(cmd.Context(), id, nil, client.ApproveCampaignJSONRequestBody{})
			if err := client.Check(resp, err); err != nil {
				return err
			}
			if !watch {
				return a.reply(cmd.OutOrStdout(), campaignAnswer(resp.JSON200))
			}
			if !a.JSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "campaign %d approved; watching\n", id)
			}
			return a.watch(cmd, c, id, after)
		},
	}
	approve.Flags().BoolVar(&watch, "watch", false, "follow the campaign until it is sent or cancelled")

	cmd.AddCommand(a.campaignWriteCommands()...)
	cmd.AddCommand(a.campaignReportActions()...)
	cmd.AddCommand(list, show, a.campaignReportCmd(), a.abCmd(), approve,
		a.transition("pause", "Pause a sending campaign (messages already handed to a worker may still go out)",
			func(ctx context.Context, c *client.Client, id int64) (*client.Campaign, error) {
				r, err := c.PauseCampaignWithResponse(ctx, id, nil)
				return checked(r, err, func() *client.Campaign { return r.JSON200 })
			}),
		a.transition("resume", "Resume a paused campaign",
			func(ctx context.Context, c *client.Client, id int64) (*client.Campaign, error) {
				r, err := c.ResumeCampaignWithResponse(ctx, id, nil)
				return checked(r, err, func() *client.Campaign { return r.JSON200 })
			}),
		a.transition("cancel", "Cancel a campaign; every queued send is cancelled",
			func(ctx context.Context, c *client.Client, id int64) (*client.Campaign, error) {
				r, err := c.CancelCampaignWithResponse(ctx, id, nil)
				return checked(r, err, func() *client.Campaign { return r.JSON200 })
			}),
	)
	return cmd
}

// transition is a command that moves campaign ID to another state.
func (a *App) transition(name, short string, do func(context.Context, *client.Client, int64) (*client.Campaign, error)) *cobra.Command {
	return &cobra.Command{
		Use:   name + " ID",
		Short: short,
		Args:  args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			camp, err := do(ctx, c, id)
			if err != nil {
				return answer{}, err
			}
			return campaignAnswer(camp), nil
		}),
	}
}

// checked is the campaign an answer carries, or the answer's error.
func checked[R interface{ StatusCode() int }](r R, err error, campaign func() *client.Campaign) (*client.Campaign, error) {
	if err := client.Check(r, err); err != nil {
		return nil, err
	}
	return campaign(), nil
}

// campaignAnswer is a campaign as JSON, or its id, name and status in a line.
func campaignAnswer(camp *client.Campaign) answer {
	return answer{camp, say("campaign %d (%s): %s", camp.Id, camp.Name, camp.Status)}
}

func campaignStats(ctx context.Context, c *client.Client, id int64) (*client.CampaignStats, error) {
	resp, err := c.GetCampaignStatsWithResponse(ctx, id)
	if err := client.Check(resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}

func countsText(s *client.CampaignStats) string {
	n := s.Counts
	text := fmt.Sprintf("%d total: %d sent, %d queued, %d sending, %d failed, %d unknown, %d suppressed, %d cancelled",
		s.Total, n.Sent, n.Queued, n.Sending, n.Failed, n.Unknown, n.Suppressed, n.Cancelled)
	if s.Skipped != nil {
		text += fmt.Sprintf(" (not sent to: %d suppressed, %d unconfirmed)", s.Skipped.Suppressed, s.Skipped.Unconfirmed)
	}
	return text
}

// logEnd pages to the end of the account's event log and returns the cursor after
// its last event ("" when the log is empty: a stream then starts now).
func logEnd(ctx context.Context, c *client.Client) (string, error) {
	var after string
	for {
		page, err := c.ListEventsWithResponse(ctx, &client.ListEventsParams{Limit: client.Ptr(500), After: &after})
		if err := client.Check(page, err); err != nil {
			return "", err
		}
		if len(page.JSON200.Data) == 0 || page.JSON200.NextCursor == nil {
			return after, nil
		}
		after = *page.JSON200.NextCursor
	}
}

// printCampaignFields is `campaigns show` for people: the campaign field by field
// and the counts of its sends.
func printCampaignFields(out io.Writer, k *client.Campaign, stats *client.CampaignStats) error {
	rows := [][]string{
		{"id", itoa(k.Id)}, {"name", k.Name}, {"status", string(k.Status)}, {"subject", k.Subject},
		{"from", strings.TrimSpace(k.FromName + " <" + k.FromEmail + ">")},
		{"created", when(&k.CreatedAt)}, {"approved", when(k.ApprovedAt)}, {"started", when(k.StartedAt)},
		{"finished", when(k.FinishedAt)}, {"sends", countsText(stats)},
	}
	if k.SenderId != nil {
		rows = append(rows, []string{"sender", itoa(*k.SenderId)})
	}
	if k.PoolId != nil {
		rows = append(rows, []string{"sender pool", itoa(*k.PoolId)})
	}
	if k.DeliverAtLocal != nil {
		rows = append(rows, []string{"delivered at", *k.DeliverAtLocal + " in each recipient's zone"})
	}
	if k.SendWindow != nil {
		rows = append(rows, []string{"send window", windowText(k.SendWindow)})
	}
	if k.PausedReason != nil {
		rows = append(rows, []string{"paused because", *k.PausedReason})
	}
	return table(out, []string{"FIELD", "VALUE"}, rows)
}
