package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// subscriberRef resolves EMAIL|ID: a positive integer is an id, anything else
// the address of one of the account's subscribers (any case).
func subscriberRef(ctx context.Context, c *client.Client, ref string) (int64, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		if id < 1 {
			return 0, Usage(fmt.Errorf("%q is not an id (a positive integer) or an address", ref))
		}
		return id, nil
	}
	email := strings.ToLower(strings.TrimSpace(ref))
	if !strings.Contains(email, "@") {
		return 0, Usage(fmt.Errorf("%q is not an id (a positive integer) or an address", ref))
	}
	for s, err := range c.Subscribers.Iter(ctx, client.ListSubscribersParams{Email: &email, Limit: client.Ptr(50)}) {
		if err != nil {
			return 0, err
		}
		if strings.EqualFold(s.Email, email) {
			return s.Id, nil
		}
	}
	return 0, &client.Error{Status: http.StatusNotFound, Problem: client.Problem{Title: "no subscriber " + email}}
}

// subscriberClient connects and resolves ref, an EMAIL|ID argument.
func (a *App) subscriberClient(ctx context.Context, ref string) (*client.Client, int64, error) {
	c, err := a.client()
	if err != nil {
		return nil, 0, err
	}
	id, err := subscriberRef(ctx, c, ref)
	return c, id, err
}

// subscriberRightsCommands are the person's activity, data export and erasure.
func (a *App) subscriberRightsCommands() []*cobra.Command {
	var p paging
	activity := &cobra.Command{
		Use:   "activity EMAIL|ID",
		Short: "Show what happened to a subscriber, newest first, a page at a time",
		Long: `Show a subscriber's activity, newest first: campaign and sequence sends with their outcome,
transactional messages, opens and clicks (scanner or person), opt-ins and opt-outs with their source,
sequence steps and suppression. One page at a time: the next page's --cursor is printed on standard
error; --all follows every page.`,
		Example: "  sendonce subscribers activity ada@example.com\n  sendonce subscribers activity 42 --all --json | jq '.[].kind'",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if err := p.check(); err != nil {
				return err
			}
			c, id, err := a.subscriberClient(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			items, next, err := pages(p, func(cursor *string) ([]client.ActivityItem, *string, error) {
				r, err := c.GetSubscriberActivityWithResponse(cmd.Context(), id,
					&client.GetSubscriberActivityParams{Limit: client.Ptr(p.limit), Cursor: cursor})
				if err := client.Check(r, err); err != nil {
					return nil, nil, err
				}
				return r.JSON200.Data, r.JSON200.NextCursor, nil
			})
			if err != nil {
				return err
			}
			return printPages(a, cmd, p, items, next,
				func(items []client.ActivityItem, next *string) any {
					return client.ActivityPage{Data: items, NextCursor: next}
				},
				[]string{"AT", "KIND", "ID", "DATA"},
				func(it client.ActivityItem) []string {
					return []string{when(&it.At), it.Kind, itoa(it.Id), activityText(it.Data)}
				})
		},
	}
	activity.Flags().IntVar(&p.limit, "limit", 50, "page size, 1 to 500")
	activity.Flags().StringVar(&p.cursor, "cursor", "", "the next page's cursor, as the previous page printed it")
	activity.Flags().BoolVar(&p.all, "all", false, "follow every page")

	download := &cobra.Command{
		Use:   "download EMAIL|ID",
		Short: "Write everything kept about a subscriber to standard output as JSON (a GDPR access request)",
		Long: `Write the subscriber's data export to standard output, as the API returns it: profile, attributes,
lists, consents with their evidence, and history.`,
		Example: "  sendonce subscribers download ada@example.com > ada.json",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, id, err := a.subscriberClient(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			r, err := c.ExportSubscriberWithResponse(cmd.Context(), id)
			if err := client.Check(r, err); err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(r.Body)
			return err
		},
	}

	var yes bool
	erase := &cobra.Command{
		Use:   "erase EMAIL|ID",
		Short: "Erase a subscriber's data everywhere (irreversible; asks first unless --yes)",
		Long: `Erase a subscriber (GDPR Art. 17): the address, name, attributes and content are removed or
irreversibly pseudonymised everywhere sendonce keeps them; a keyed hash of the address stays in the
suppression list so a later import of it stays suppressed. This cannot be undone. Without --yes the
command asks for the subscriber's id or address to be typed again on standard input, and erases
nothing (exit 2) unless it is.`,
		Example: "  sendonce subscribers erase ada@example.com\n  sendonce subscribers erase 42 --yes",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, id, err := a.subscriberClient(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			if !yes {
				fmt.Fprintf(cmd.ErrOrStderr(), "Erase subscriber %d (%s) and everything kept about them? This cannot be undone.\nType %q to confirm: ",
					id, argv[0], argv[0])
				line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if strings.TrimSpace(line) != argv[0] {
					fmt.Fprintln(cmd.ErrOrStderr())
					return Usage(fmt.Errorf("not confirmed: nothing erased (--yes skips the question)"))
				}
			}
			r, err := c.EraseSubscriberWithResponse(cmd.Context(), id, nil)
			if err := client.Check(r, err); err != nil {
				return err
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), r.JSON200)
			}
			e := r.JSON200
			fmt.Fprintf(cmd.OutOrStdout(), "erased subscriber %d: erasure %d %s (%s)\n", id, e.Id, e.Status, countsOf(e.Counts))
			return nil
		},
	}
	erase.Flags().BoolVar(&yes, "yes", false, "do not ask for confirmation")
	return []*cobra.Command{activity, download, erase}
}

// countsOf is "table n, …", the tables in alphabetical order.
func countsOf(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "nothing kept"
	}
	return strings.Join(parts, ", ")
}

// activityText is an activity item's data as compact JSON.
func activityText(d map[string]any) string {
	if len(d) == 0 {
		return "{}"
	}
	b, err := json.Marshal(d)
	if err != nil {
		return fmt.Sprint(d)
	}
	return string(b)
}

// campaignReportActions are retry-failed and duplicate.
func (a *App) campaignReportActions() []*cobra.Command {
	retry := &cobra.Command{
		Use:   "retry-failed ID",
		Short: "Queue a campaign's failed sends again (not the unknown ones: those may have been delivered)",
		Long: `Queue the campaign's failed sends again, each under its own job id, so each recipient still gets
the campaign at most once, with the campaign's exclusions applied again. Sends whose outcome is unknown
are left alone: the provider may have delivered them.`,
		Example: "  sendonce campaigns retry-failed 42",
		Args:    args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			r, err := c.RetryFailedCampaignWithResponse(ctx, id, nil)
			if err := client.Check(r, err); err != nil {
				return answer{}, err
			}
			return answer{r.JSON200, say("campaign %d: %d failed sends queued again (%s)", id, r.JSON200.Requeued, r.JSON200.Campaign.Status)}, nil
		}),
	}
	dup := &cobra.Command{
		Use:     "duplicate ID",
		Short:   "Copy a campaign (everything but its sends) into a new draft",
		Example: "  sendonce campaigns duplicate 42 --json | jq .id",
		Args:    args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			r, err := c.DuplicateCampaignWithResponse(ctx, id, nil)
			if err := client.Check(r, err); err != nil {
				return answer{}, err
			}
			return answer{r.JSON201, say("duplicated campaign %d as %d %q (%s)", id, r.JSON201.Id, r.JSON201.Name, r.JSON201.Status)}, nil
		}),
	}
	return []*cobra.Command{retry, dup}
}

// templateDuplicateCmd is `templates duplicate ID`.
func (a *App) templateDuplicateCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "duplicate ID",
		Short:   "Copy a template into a new one",
		Example: "  sendonce templates duplicate 3",
		Args:    args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			r, err := c.DuplicateTemplateWithResponse(ctx, id, nil)
			if err := client.Check(r, err); err != nil {
				return answer{}, err
			}
			return answer{r.JSON201, say("duplicated template %d as %d %q", id, r.JSON201.Id, r.JSON201.Name)}, nil
		}),
	}
}
