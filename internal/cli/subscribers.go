package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

func (a *App) subscribersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "subscribers", Short: "Import and look up subscribers"}
	var listID int64
	imp := &cobra.Command{
		Use:   "import FILE",
		Short: "Upsert subscribers from a CSV (.csv) or JSON array (.json) file, with upload progress",
		Long: `Upsert subscribers from a CSV file (header: email,name,status,attributes…) or a JSON array,
chosen by the file's extension (- reads CSV from standard input). A progress bar shows the upload
on a terminal; then the summary: inserted, updated and each rejected line with its reason.`,
		Example: "  sendonce subscribers import people.csv --list 7\n  sendonce subscribers import people.json --json | jq .inserted",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			var params client.ImportSubscribersParams
			if listID != 0 {
				// Before the upload: a mistyped list id would otherwise cost the whole file first.
				l, err := c.GetListWithResponse(cmd.Context(), listID)
				if err := client.Check(l, err); err != nil {
					return fmt.Errorf("list %d: %w", listID, err)
				}
				params.ListId = &listID
			}
			return a.importFile(cmd, c, argv[0], &params)
		},
	}
	imp.Flags().Int64Var(&listID, "list", 0, "also add every imported subscriber to this list id")

	get := &cobra.Command{
		Use:     "get EMAIL",
		Short:   "Show the subscriber with this address",
		Example: "  sendonce subscribers get ada@example.com --json",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			email := strings.ToLower(strings.TrimSpace(argv[0]))
			for s, err := range c.Subscribers.Iter(cmd.Context(), client.ListSubscribersParams{Email: &email, Limit: client.Ptr(50)}) {
				if err != nil {
					return err
				}
				if strings.EqualFold(s.Email, email) {
					if a.JSON {
						return printJSON(cmd.OutOrStdout(), s)
					}
					attrs, err := attributesText(s.Attributes)
					if err != nil {
						return err
					}
					return table(cmd.OutOrStdout(), []string{"ID", "EMAIL", "NAME", "STATUS", "CREATED", "ATTRIBUTES"},
						[][]string{{itoa(s.Id), s.Email, s.Name, string(s.Status), when(&s.CreatedAt), attrs}})
				}
			}
			return &client.Error{Status: http.StatusNotFound, Problem: client.Problem{Title: "no subscriber " + email}}
		},
	}
	var format, status string
	exp := &cobra.Command{
		Use:   "export",
		Short: "Write every subscriber to standard output as CSV or NDJSON",
		Long: `Stream the account's subscribers (id, email, name, status, attributes, created_at, updated_at) to
standard output, as CSV (RFC 4180; cells a spreadsheet would run as formulas start with an apostrophe)
or NDJSON, from one consistent snapshot. --list and --status narrow it as the list page does.`,
		Example: "  sendonce subscribers export --format csv > people.csv\n  sendonce subscribers export --format ndjson --list 7 | jq .email",
		Args:    args(0),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			var params client.ExportSubscribersParams
			switch format {
			case "csv", "ndjson":
				f := client.ExportSubscribersParamsFormat(format)
				params.Format = &f
			default:
				return fmt.Errorf("--format must be csv or ndjson")
			}
			if listID != 0 {
				params.ListId = &listID
			}
			if status != "" {
				st := client.SubscriberStatus(status)
				params.Status = &st
			}
			_, err = c.DownloadSubscribers(cmd.Context(), params, cmd.OutOrStdout())
			return err
		},
	}
	exp.Flags().StringVar(&format, "format", "csv", "csv or ndjson")
	exp.Flags().Int64Var(&listID, "list", 0, "only the subscribed members of this list id")
	exp.Flags().StringVar(&status, "status", "", "only subscribers with this status (pending, confirmed, unsubscribed)")
	cmd.AddCommand(imp, get, exp)
	cmd.AddCommand(a.subscriberRightsCommands()...)
	return cmd
}

// attributesText is a subscriber's attributes as compact JSON, as the API and
// the import files write them ({} when there are none).
func attributesText(a client.Attributes) (string, error) {
	if len(a) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(a)
	return string(b), err
}

// importFile uploads path, drawing the upload on a terminal, and prints the summary.
func (a *App) importFile(cmd *cobra.Command, c *client.Client, path string, params *client.ImportSubscribersParams) error {
	errw := cmd.ErrOrStderr()
	var (
		body io.Reader
		size int64 = -1
		name       = path
	)
	contentType := "text/csv"
	if path == "-" {
		body, name = cmd.InOrStdin(), "standard input"
	} else {
		f, err := os.Open(path)
		if err != nil {
			return Usage(err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		body = f
		switch strings.ToLower(filepath.Ext(path)) {
		case ".json":
			contentType = "application/json"
		case ".csv", ".txt", "":
		default:
			return Usage(fmt.Errorf("%s: the file must end in .csv or .json", path))
		}
	}
	if a.Terminal(errw) {
		bar := uploadBar(errw, size, name)
		r := progressbar.NewReader(body, bar)
		body = &r
		defer bar.Close()
	} else if !a.JSON {
		fmt.Fprintf(errw, "uploading %s (%s)\n", name, bytesText(size))
	}
	resp, err := c.ImportSubscribersWithBodyWithResponse(cmd.Context(), params, contentType, body)
	if err := client.Check(resp, err); err != nil {
		return err
	}
	res := resp.JSON200
	if res == nil {
		return errors.New("the import answered without a summary")
	}
	if a.JSON {
		return printJSON(cmd.OutOrStdout(), res)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "imported %s: %d inserted, %d updated, %d rejected\n", name, res.Inserted, res.Updated, len(res.Rejected))
	if len(res.Rejected) > 0 {
		rows := make([][]string, 0, len(res.Rejected))
		for _, r := range res.Rejected {
			rows = append(rows, []string{itoa(int64(r.Line)), r.Email, r.Reason})
		}
		return table(out, []string{"LINE", "EMAIL", "REASON"}, rows)
	}
	return nil
}

// uploadBar is the upload's bar: bytes sent of the file's size, rate and time left.
func uploadBar(w io.Writer, size int64, name string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("uploading "+name),
		progressbar.OptionShowCount(),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000), // 100 ms between redraws
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}

func bytesText(n int64) string {
	switch {
	case n < 0:
		return "size unknown"
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
