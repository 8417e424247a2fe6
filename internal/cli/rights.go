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

// subscriberRightsCommands are the person's activity, data export and erasure.
func (a *App) subscriberRightsCommands() []*cobra.Command {
	var limit int
	var cursor string
	var all bool
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
			if limit < 1 || limit > 500 {
				return Usage(fmt.Errorf("--limit must be 1 to 500"))
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			id, err := subscriberRef(cmd.Context(), c, argv[0])
			if err != nil {
				return err
			}
			params := client.GetSubscriberActivityParams{Limit: client.Ptr(limit)}
			if cursor != "" {
				params.Cursor = &cursor
			}
			var items []client.ActivityItem
			var next *string
			for {
				r, err := c.GetSubscriberActivityWithResponse(cmd.Context(), id, &params)
				if err := client.Check(r, err); err != nil {
					return err
				}
				items = append(items, r.JSON200.Data...)
				next = r.JSON200.NextCursor
				if !all || next == nil || *next == "" {
					break
				}
				params.Cursor = next
			}
			if all {
				next = nil
			}
			out := cmd.OutOrStdout()
			if a.JSON {
				if items == nil {
					items = []client.ActivityItem{}
				}
				if all {
					return printJSON(out, items)
				}
				return printJSON(out, client.ActivityPage{Data: items, NextCursor: next})
			}
			rows := make([][]string, 0, len(items))
			for _, it := range items {
				rows = append(rows, []string{when(&it.At), it.Kind, itoa(it.Id), activityText(it.Data)})
			}
			if err := table(out, []string{"AT", "KIND", "ID", "DATA"}, rows); err != nil {
				return err
			}
			if next != nil && *next != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "more: --cursor %s\n", *next)
			}
			return nil
		},
	}
	activity.Flags().IntVar(&limit, "limit", 50, "page size, 1 to 500")
	activity.Flags().StringVar(&cursor, "cursor", "", "the next page's cursor, as the previous page printed it")
	activity.Flags().BoolVar(&all, "all", false, "follow every page")

	download := &cobra.Command{
		Use:   "download EMAIL|ID",
		Short: "Write everything kept about a subscriber to standard output as JSON (a GDPR access request)",
		Long: `Write the subscriber's data export to standard output, as the API returns it: profile, attributes,
lists, consents with their evidence, and history.`,
		Example: "  sendonce subscribers download ada@example.com > ada.json",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			id, err := subscriberRef(cmd.Context(), c, argv[0])
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
			c, err := a.client()
			if err != nil {
				return err
			}
			id, err := subscriberRef(cmd.Context(), c, argv[0])
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
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID(argv[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			r, err := c.RetryFailedCampaignWithResponse(cmd.Context(), id, nil)
			if err := client.Check(r, err); err != nil {
				return err
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), r.JSON200)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "campaign %d: %d failed sends queued again (%s)\n", id, r.JSON200.Requeued, r.JSON200.Campaign.Status)
			return nil
		},
	}
	dup := &cobra.Command{
		Use:     "duplicate ID",
		Short:   "Copy a campaign (everything but its sends) into a new draft",
		Example: "  sendonce campaigns duplicate 42 --json | jq .id",
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
			r, err := c.DuplicateCampaignWithResponse(cmd.Context(), id, nil)
			if err := client.Check(r, err); err != nil {
				return err
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), r.JSON201)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "duplicated campaign %d as %d %q (%s)\n", id, r.JSON201.Id, r.JSON201.Name, r.JSON201.Status)
			return nil
		},
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
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID(argv[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			r, err := c.DuplicateTemplateWithResponse(cmd.Context(), id, nil)
			if err := client.Check(r, err); err != nil {
				return err
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), r.JSON201)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "duplicated template %d as %d %q\n", id, r.JSON201.Id, r.JSON201.Name)
			return nil
		},
	}
}
