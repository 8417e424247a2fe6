package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/optional"
)

// abCmd is `sendonce campaigns ab`: a draft campaign's A/B test (its variants and
// how the winner is chosen), the report per variant, and the winner chosen by hand
// (docs/ab-tests.md).
func (a *App) abCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "ab", Short: "A/B tests: set a draft's variants, show the report per variant, choose the winner"}

	var (
		mode, metric, jsonFile string
		percent                int
		wait                   time.Duration
		variants               []string
	)
	set := &cobra.Command{
		Use:   "set ID (--variant FIELDS… | --file FILE)",
		Short: "Make a draft campaign an A/B test, or replace its test",
		Long: `Make a draft campaign an A/B test of 2 to 5 variants, or replace its test.

Each --variant is one variant (A, B, … in the order given): comma-separated FIELD=VALUE
pairs, each changing the campaign's own:

  subject=TEXT        the subject (a template, like the campaign's)
  from_name=TEXT      the From name
  html_file=FILE      the HTML template, read from a file
  text_file=FILE      the text template, read from a file
  template=ID         take subject and content from this template at approval

A comma stays in a value unless a field name and = follow it ('subject=Hi, you' is one field).
--file reads the whole test as JSON instead (the body of PUT /v1/campaigns/{id}/ab-test);
the flags given beside it change it.

--mode split sends every recipient one variant. --mode test sends a test group of
--test-percent % first, waits --wait from the start, then sends the winner to the rest,
chosen by --metric: clicks or opens by people (opens are unreliable), or manual
(sendonce campaigns ab winner).`,
		Example: `  sendonce campaigns ab set 42 --mode split --variant 'subject=Our spring sale' \
    --variant 'subject={{.Name}}, 20% off until Sunday,from_name=Ann at Example'
  sendonce campaigns ab set 42 --mode test --test-percent 20 --wait 4h --metric clicks \
    --variant 'html_file=a.html' --variant 'html_file=b.html'
  sendonce campaigns ab set 42 --file test.json`,
		Args: args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			id, err := parseID(argv[0])
			if err != nil {
				return err
			}
			s := setOf{cmd.Flags()}
			var in client.ABTestInput
			if s.has("file") {
				b, err := os.ReadFile(jsonFile)
				if err != nil {
					return Usage(fmt.Errorf("--file: %w", err))
				}
				if err := json.Unmarshal(b, &in); err != nil {
					return Usage(fmt.Errorf("--file %s: not an A/B test as JSON: %w", jsonFile, err))
				}
			} else if err := need(s, cmd.CommandPath(), "mode", "variant"); err != nil {
				return err
			}
			if s.has("mode") {
				in.Mode = client.ABTestInputMode(mode)
			}
			if s.has("test-percent") {
				in.TestPercent = &percent
			}
			if s.has("wait") {
				if wait < time.Second || wait%time.Second != 0 {
					return Usage(fmt.Errorf("--wait %s: want whole seconds, such as 4h or 90m", wait))
				}
				secs := int(wait / time.Second)
				in.WaitSeconds = &secs
			}
			if s.has("metric") {
				m := client.ABTestInputMetric(metric)
				in.Metric = &m
			}
			if s.has("variant") {
				in.Variants = in.Variants[:0]
				for _, v := range variants {
					parsed, err := parseVariant(v)
					if err != nil {
						return err
					}
					in.Variants = append(in.Variants, parsed)
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			r, err := c.SetCampaignABTestWithResponse(cmd.Context(), id, in)
			if err := client.Check(r, err); err != nil {
				return err
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), r.JSON200)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "campaign %d: A/B test set, %s, %d variants\n", id, testText(r.JSON200), len(r.JSON200.Variants))
			return nil
		},
	}
	f := set.Flags()
	f.StringVar(&mode, "mode", "", "split (every recipient one variant) or test (a test group first, then the winner)")
	f.IntVar(&percent, "test-percent", 0, "mode test: the test group's share of the audience, 1 to 50 %")
	f.DurationVar(&wait, "wait", 0, "mode test: from the start of the send until the winner is chosen (1m to 720h)")
	f.StringVar(&metric, "metric", "", "mode test: clicks, opens (unreliable) or manual")
	f.StringArrayVar(&variants, "variant", nil, "one variant: FIELD=VALUE,… with fields subject, from_name, html_file, text_file, template (repeat, 2 to 5)")
	f.StringVar(&jsonFile, "file", "", "the test as JSON (the API's body); flags given beside it change it")
	_ = set.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{"split", "test"}, cobra.ShellCompDirectiveNoFileComp))
	_ = set.RegisterFlagCompletionFunc("metric", cobra.FixedCompletions([]string{"clicks", "opens", "manual"}, cobra.ShellCompDirectiveNoFileComp))

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a campaign's A/B test: its variants, winner and report per variant with a significance hint",
		Long: `Show a campaign's A/B test: its settings, its variants, the winner once chosen, and per
variant the recipients, messages sent, people who opened and clicked (suspected scanners left
out), their rates and the p-value of a two-proportion z-test against the leader. Above 0.05 the
difference may well be noise: wait, or send to more people, before picking a winner from it.`,
		Example: "  sendonce campaigns ab show 42",
		Args:    args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			r, err := c.GetCampaignABTestWithResponse(ctx, id)
			if err := client.Check(r, err); err != nil {
				return answer{}, err
			}
			return answer{r.JSON200, func(out io.Writer) error { return printABTest(out, r.JSON200) }}, nil
		}),
	}

	drop := &cobra.Command{
		Use:     "clear ID",
		Short:   "Make a draft campaign an ordinary one again (its variants are removed)",
		Example: "  sendonce campaigns ab clear 42",
		Args:    args(1),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, _ []string) (answer, error) {
			r, err := c.DeleteCampaignABTestWithResponse(ctx, id)
			return answer{nil, say("campaign %d: no A/B test", id)}, client.Check(r, err)
		}),
	}

	winner := &cobra.Command{
		Use:   "winner ID VARIANT",
		Short: "Choose the winner of a test by hand (once): the rest of the audience gets it",
		Long: `Choose the winner of an A/B test in mode test (metric manual, or before the automatic pick).
It is chosen once: a winner already chosen, by a person or by the metric, is refused (exit 4)
and changes nothing. The rest of the audience then gets the winner.`,
		Example: "  sendonce campaigns ab winner 42 B",
		Args:    args(2),
		RunE: a.byID(0, func(ctx context.Context, c *client.Client, id int64, argv []string) (answer, error) {
			r, err := c.ChooseCampaignWinnerWithResponse(ctx, id, nil, client.WinnerRequest{Variant: strings.ToUpper(argv[1])})
			if err := client.Check(r, err); err != nil {
				return answer{}, err
			}
			return answer{r.JSON200, say("campaign %d: variant %s wins; the rest of the audience gets it", id, optional.Value(r.JSON200.Winner))}, nil
		}),
	}
	cmd.AddCommand(set, show, drop, winner)
	return cmd
}

// variantFields are the names a --variant value's fields may have.
var variantFields = []string{"subject", "from_name", "html_file", "text_file", "template"}

// parseVariant reads one --variant value: FIELD=VALUE pairs split at each comma
// that a field name and = follow.
func parseVariant(v string) (client.ABVariantInput, error) {
	var out client.ABVariantInput
	bad := func(format string, a ...any) error {
		return Usage(fmt.Errorf("--variant %q: "+format, append([]any{v}, a...)...))
	}
	for _, field := range splitVariant(v) {
		key, val, ok := strings.Cut(field, "=")
		if !ok {
			return out, bad("want FIELD=VALUE,… with fields %s", strings.Join(variantFields, ", "))
		}
		switch key {
		case "subject":
			out.Subject = &val
		case "from_name":
			out.FromName = &val
		case "html_file", "text_file":
			b, err := os.ReadFile(val)
			if err != nil {
				return out, bad("%w", err)
			}
			text := string(b)
			if key == "html_file" {
				out.HtmlTemplate = &text
			} else {
				out.TextTemplate = &text
			}
		case "template":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil || n < 1 {
				return out, bad("template=%q is not a template id", val)
			}
			out.TemplateId = &n
		default:
			return out, bad("%q is not one of %s", key, strings.Join(variantFields, ", "))
		}
	}
	return out, nil
}

// splitVariant splits v at the commas a known field name and = follow.
func splitVariant(v string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(v); i++ {
		if v[i] != ',' {
			continue
		}
		for _, f := range variantFields {
			if strings.HasPrefix(v[i+1:], f+"=") {
				parts = append(parts, v[start:i])
				start = i + 1
				break
			}
		}
	}
	return append(parts, v[start:])
}

// testText is how a test picks its winner, in words.
func testText(t *client.ABTest) string {
	if t.Mode == "split" {
		return "split (every recipient one variant)"
	}
	text := "test"
	if t.TestPercent != nil {
		text += fmt.Sprintf(": %d %% first", *t.TestPercent)
	}
	if t.Metric != nil {
		if *t.Metric == "manual" {
			text += ", winner chosen by hand"
		} else {
			text += ", winner by " + string(*t.Metric)
			if t.WaitSeconds != nil {
				text += " after " + (time.Duration(*t.WaitSeconds) * time.Second).String()
			}
		}
	}
	return text
}

func printABTest(out io.Writer, t *client.ABTest) error {
	win := "-"
	if t.Winner != nil {
		win = *t.Winner
		if t.ChosenBy != nil {
			win += " (" + string(*t.ChosenBy) + ", " + when(t.WinnerChosenAt) + ")"
		}
	}
	fmt.Fprintf(out, "mode: %s\nwinner: %s\n\n", testText(t), win)
	rows := make([][]string, 0, len(t.Variants))
	for _, v := range t.Variants {
		var content []string
		if v.HtmlTemplate != nil {
			content = append(content, "own HTML")
		}
		if v.TextTemplate != nil {
			content = append(content, "own text")
		}
		if v.TemplateId != nil {
			content = append(content, "template "+itoa(*v.TemplateId))
		}
		rows = append(rows, []string{v.Variant, orCampaign(v.Subject), orCampaign(v.FromName), strings.Join(content, ", ")})
	}
	if err := table(out, []string{"VARIANT", "SUBJECT", "FROM NAME", "CONTENT"}, rows); err != nil {
		return err
	}
	if t.Report == nil || len(*t.Report) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	rows = rows[:0]
	for _, r := range *t.Report {
		rows = append(rows, []string{r.Variant, itoa(r.Recipients), itoa(r.Sent), itoa(r.Opened), rate(r.OpenRate),
			itoa(r.Clicked), rate(r.ClickRate), strconv.FormatFloat(r.PValue, 'f', 3, 64), significance(r)})
	}
	return table(out, []string{"VARIANT", "RECIPIENTS", "SENT", "OPENED", "OPEN RATE", "CLICKED", "CLICK RATE", "P-VALUE", "HINT"}, rows)
}

// significance is the report's hint in words: the leader, a difference unlikely
// to be noise (p < 0.05), or one that may well be.
func significance(r client.ABVariantReport) string {
	switch {
	case r.Leader:
		return "leader"
	case r.PValue < 0.05:
		return "behind the leader (p < 0.05)"
	}
	return "may be noise"
}

func rate(v float64) string { return fmt.Sprintf("%.2f%%", v*100) }

func orCampaign(s *string) string {
	if s == nil {
		return "(the campaign's)"
	}
	return *s
}
