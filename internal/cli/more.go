package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

func (a *App) messagesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "messages", Short: "Send transactional messages"}
	var (
		to, from, key, data, toName string
		subject, mdFile, blocksFile string
		template, layoutID          int64
		senderID, poolID            int64
		tags                        []string
	)
	send := &cobra.Command{
		Use:   "send --to ADDRESS (--template ID | --subject S (--markdown FILE | --blocks FILE)) --idempotency-key KEY",
		Short: "Send one transactional message from a template, Markdown or a block design; the key makes a repeat of the command send it once",
		Long: `Send one transactional message from a template, or with a subject and a Markdown body or a block
design (JSON, docs/content.md#blocks), framed in --layout, else the account's default layout. The Idempotency-Key names the message: running
the command again with the same key and flags answers the same message instead of sending another
(with other flags it is refused, exit 4).`,
		Example: `  sendonce messages send --to ada@example.com --from shop@example.com --template 3 \
      --idempotency-key order-A-1002-receipt --data '{"order":"A-1002"}'
  sendonce messages send --to ada@example.com --from shop@example.com --template 3 --pool 2 \
      --idempotency-key order-A-1003-receipt`,
		Args: args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s := setOf{cmd.Flags()}
			bodies := 0
			for _, given := range []bool{template != 0, mdFile != "", blocksFile != ""} {
				if given {
					bodies++
				}
			}
			if to == "" || bodies != 1 || key == "" || from == "" {
				return Usage(errors.New("messages send needs --to, --from, --idempotency-key and one of --template, or --subject with --markdown or --blocks"))
			}
			body := client.MessageCreate{To: to, From: from}
			if template != 0 {
				body.TemplateId = &template
			} else {
				md, err := file(s, "markdown", mdFile)
				if err != nil {
					return err
				}
				blocks, err := design(s, blocksFile)
				if err != nil {
					return err
				}
				body.Subject, body.Markdown, body.Blocks = &subject, md, blocks
				if s.has("layout") {
					body.LayoutId = &layoutID
				}
			}
			if toName != "" {
				body.ToName = &toName
			}
			if s.has("sender") && s.has("pool") {
				return Usage(errors.New("messages send takes --sender or --pool, not both"))
			}
			if s.has("sender") {
				body.SenderId = &senderID
			}
			if s.has("pool") {
				body.PoolId = &poolID
			}
			if len(tags) > 0 {
				body.Tags = &tags
			}
			if data != "" {
				raw := json.RawMessage(data)
				if !json.Valid(raw) {
					return Usage(errors.New("--data must be a JSON object"))
				}
				body.Data = &raw
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			resp, err := c.SendMessageWithResponse(cmd.Context(), &client.SendMessageParams{IdempotencyKey: key}, body)
			if err := client.Check(resp, err); err != nil {
				return err
			}
			m := resp.JSON202
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), m)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "message %d to %s: %s\n", m.Id, m.To, m.Status)
			return nil
		},
	}
	f := send.Flags()
	f.StringVar(&to, "to", "", "the recipient's address")
	f.StringVar(&toName, "to-name", "", "the recipient's name")
	f.StringVar(&from, "from", "", "the From address")
	f.Int64Var(&template, "template", 0, "the template id")
	f.StringVar(&subject, "subject", "", "the subject (a Go template), with --markdown")
	f.StringVar(&mdFile, "markdown", "", "a file with a Markdown body (Go template actions work inside) instead of --template")
	f.StringVar(&blocksFile, "blocks", "", "a file with a block design (JSON, docs/content.md#blocks) instead of --template")
	f.Int64Var(&layoutID, "layout", 0, "the layout id framing the Markdown or the blocks (default: the account's default layout)")
	f.StringVar(&key, "idempotency-key", "", "names the message: a repeat with the same key sends nothing more")
	f.StringVar(&data, "data", "", "the template's .Attributes, a JSON object")
	f.StringSliceVar(&tags, "tag", nil, "a tag (repeatable)")
	f.Int64Var(&senderID, "sender", 0, "send through this sender id (default: the account's default sender)")
	f.Int64Var(&poolID, "pool", 0, "send through this sender pool id (its first usable sender, failing over to the next only when refused before anything was handed over)")
	cmd.AddCommand(send)
	return cmd
}

func (a *App) suppressionsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "suppressions", Short: "Add or lift suppressions (addresses nothing is sent to)"}
	var reason, source string
	add := &cobra.Command{
		Use:   "add EMAIL",
		Short: "Suppress an address now",
		Args:  args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			body := client.SuppressionCreate{Email: argv[0]}
			if reason != "" {
				body.Reason = client.Ptr(client.SuppressionReason(reason))
			}
			if source != "" {
				body.Source = &source
			}
			resp, err := c.AddSuppressionWithResponse(cmd.Context(), nil, body)
			if err := client.Check(resp, err); err != nil {
				return err
			}
			s := resp.JSON201
			if s == nil {
				s = resp.JSON200 // already suppressed: the first record
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), s)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "suppressed %s (%s) since %s\n", s.Email, s.Reason, when(&s.CreatedAt))
			return nil
		},
	}
	add.Flags().StringVar(&reason, "reason", "", "manual (default), hard_bounce, complaint, unsubscribe")
	add.Flags().StringVar(&source, "source", "", "free text kept with the suppression")
	remove := &cobra.Command{
		Use:   "remove EMAIL",
		Short: "Lift a suppression (the subscriber's status is not changed)",
		Args:  args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			email := strings.TrimSpace(argv[0])
			resp, err := c.RemoveSuppressionWithResponse(cmd.Context(), email)
			if err := client.Check(resp, err); err != nil {
				return err
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"email": email, "removed": true})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "lifted the suppression of %s\n", email)
			return nil
		},
	}
	cmd.AddCommand(add, remove)
	return cmd
}

func (a *App) eventsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "events", Short: "Follow the account's events"}
	var (
		types []string
		after string
	)
	tail := &cobra.Command{
		Use:   "tail",
		Short: "Print the account's events as they happen, like tail -f (until interrupted)",
		Long: `Print the account's events as they happen (the SSE stream), reconnecting where it left off
when the connection breaks. One line per event: time, type and data; with --json the event
object per line (its "cursor" resumes with --after).`,
		Example: "  sendonce events tail --type send.failed --type send.unknown\n  sendonce events tail --json | jq -c .data",
		Args:    args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			enc := json.NewEncoder(out)
			for ev, err := range c.Stream(cmd.Context(), client.StreamOptions{Types: types, After: after, Reconnects: 1000}) {
				if err != nil {
					return err
				}
				if a.JSON {
					// The event's members spelled out: client.Event marshals itself (a
					// union), so embedding it would drop the cursor.
					if err := enc.Encode(struct {
						Cursor    string           `json:"cursor"`
						ID        string           `json:"id"`
						Type      client.EventType `json:"type"`
						Timestamp time.Time        `json:"timestamp"`
						Data      map[string]any   `json:"data"`
					}{ev.ID, ev.Id, ev.Type, ev.Timestamp, ev.Data}); err != nil {
						return err
					}
					continue
				}
				data, _ := json.Marshal(ev.Data)
				if _, err := fmt.Fprintf(out, "%s  %-24s %s\n", ev.Timestamp.UTC().Format("2006-01-02T15:04:05.000Z"), ev.Type, data); err != nil {
					return err
				}
			}
			return nil
		},
	}
	tail.Flags().StringArrayVar(&types, "type", nil, "only events of this type (repeatable)")
	tail.Flags().StringVar(&after, "after", "", "start after this cursor instead of now")
	cmd.AddCommand(tail, a.forwardCmd(), a.triggerCmd())
	return cmd
}
