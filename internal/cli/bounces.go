package cli

import (
	"bufio"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// bounceMailboxCmd reads and changes the account's bounce mailbox. The password
// is read from standard input, never from a flag, and never printed.
func (a *App) bounceMailboxCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bounce-mailbox", Short: "Show, set or remove the IMAP mailbox that bounces and complaints come back to"}
	get := &cobra.Command{
		Use:   "get",
		Short: "Show the bounce mailbox and what was read from it (the password is never shown)",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			resp, err := c.GetBounceMailboxWithResponse(cmd.Context())
			if err := client.Check(resp, err); err != nil {
				return err
			}
			return a.printBounceMailbox(cmd, resp.JSON200)
		},
	}
	var in client.BounceMailboxInput
	var security, folder string
	var disabled bool
	set := &cobra.Command{
		Use:   "set --host HOST --port N --username USER < password",
		Short: "Set the bounce mailbox (the password: one line on standard input)",
		Long: "Set the IMAP mailbox that the bounce_domain of the account's smtp senders delivers to. Every\n" +
			"message read from it is deleted: use a mailbox for this alone.",
		Args: args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
			password := strings.TrimSpace(line)
			if password == "" {
				return Usage(errors.New("no password on standard input"))
			}
			in.Password = &password
			if security != "" {
				s := client.BounceMailboxInputSecurity(security)
				in.Security = &s
			}
			if folder != "" {
				in.Folder = &folder
			}
			in.Enabled = !disabled
			c, err := a.client()
			if err != nil {
				return err
			}
			resp, err := c.PutBounceMailboxWithResponse(cmd.Context(), in)
			if err := client.Check(resp, err); err != nil {
				return err
			}
			return a.printBounceMailbox(cmd, resp.JSON200)
		},
	}
	f := set.Flags()
	f.StringVar(&in.Host, "host", "", "the IMAP server")
	f.IntVar(&in.Port, "port", 993, "its port")
	f.StringVar(&security, "security", "", "tls (the default), starttls or none")
	f.StringVar(&in.Username, "username", "", "the mailbox's user name")
	f.StringVar(&folder, "folder", "", "the folder to read (INBOX when absent)")
	f.BoolVar(&disabled, "disabled", false, "store the settings but do not read the mailbox")
	del := &cobra.Command{
		Use:   "delete",
		Short: "Stop reading the bounce mailbox and delete its settings",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			resp, err := c.DeleteBounceMailboxWithResponse(cmd.Context())
			if err := client.Check(resp, err); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "bounce mailbox removed")
			return nil
		},
	}
	cmd.AddCommand(get, set, del)
	return cmd
}

func (a *App) printBounceMailbox(cmd *cobra.Command, m *client.BounceMailbox) error {
	if a.JSON {
		return printJSON(cmd.OutOrStdout(), m)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "mailbox:   %s@%s:%d (%s), folder %s\n", m.Username, m.Host, m.Port, m.Security, m.Folder)
	fmt.Fprintf(w, "enabled:   %t\n", m.Enabled)
	if m.LastPollAt != nil {
		fmt.Fprintf(w, "last read: %s\n", m.LastPollAt.Format("2006-01-02 15:04:05Z07:00"))
	} else {
		fmt.Fprintln(w, "last read: never")
	}
	if m.Mode != nil {
		fmt.Fprintf(w, "mode:      %s\n", *m.Mode)
	}
	if m.LastConnectedAt != nil {
		fmt.Fprintf(w, "connected: %s\n", m.LastConnectedAt.Format("2006-01-02 15:04:05Z07:00"))
	}
	if m.LastError != nil {
		fmt.Fprintf(w, "error:     %s\n", *m.LastError)
	}
	kinds := make([]string, 0, len(m.Processed))
	for k := range m.Processed {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "%-12s %d\n", k+":", m.Processed[k])
	}
	return nil
}
