package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// dkimCmd is `sendonce dkim keys`: the account's DKIM keys of a sending domain,
// which SMTP senders sign mail From the domain with (docs/providers.md). Each
// key is printed with the TXT record to publish for it.
func (a *App) dkimCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "dkim", Short: "Generate, activate (rotate) and delete the DKIM keys SMTP senders sign with"}
	keys := &cobra.Command{Use: "keys", Short: "A sending domain's DKIM keys and the TXT records to publish for them"}

	list := &cobra.Command{
		Use:     "list DOMAIN",
		Short:   "List a domain's DKIM keys, oldest first, with the TXT record each needs published",
		Example: "  sendonce dkim keys list news.example.com",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			r, err := c.ListDkimKeysWithResponse(cmd.Context(), argv[0])
			if err := client.Check(r, err); err != nil {
				return err
			}
			return printList(a, cmd.OutOrStdout(), r.JSON200.Data, []string{"ID", "SELECTOR", "ALGORITHM", "STATE", "CREATED", "TXT RECORD AT"},
				func(k client.DkimKey) []string {
					state := "inactive"
					if k.Active {
						state = "active since " + when(k.ActivatedAt)
					}
					return []string{itoa(k.Id), k.Selector, string(k.Algorithm), state, when(&k.CreatedAt), k.Record.Name}
				})
		},
	}

	var selector, algorithm string
	create := &cobra.Command{
		Use:   "create DOMAIN [--selector S] [--algorithm rsa-2048|ed25519]",
		Short: "Generate a DKIM key for a domain (inactive) and print the TXT record to publish",
		Long: `Generate a key pair for the domain (RSA 2048 by default, or Ed25519). The private half is
stored encrypted and never shown; the TXT record to publish at <selector>._domainkey.<domain> is
printed. The key starts inactive: publish the record, then activate it (sendonce dkim keys
activate). Without --selector one is made up. Receivers verify Ed25519 less widely than RSA.`,
		Example: "  sendonce dkim keys create news.example.com --selector s2026",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s := setOf{cmd.Flags()}
			body := client.DkimKeyCreate{Selector: str(s, "selector", selector)}
			if s.has("algorithm") {
				alg := client.DkimKeyCreateAlgorithm(algorithm)
				body.Algorithm = &alg
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			r, err := c.CreateDkimKeyWithResponse(cmd.Context(), argv[0], nil, body)
			if err := client.Check(r, err); err != nil {
				return err
			}
			return a.reply(cmd.OutOrStdout(), dkimKeyAnswer(r.JSON201, "created, inactive: publish this record, then activate it"))
		},
	}
	create.Flags().StringVar(&selector, "selector", "", "the selector: one DNS label, unique per domain (default: generated)")
	create.Flags().StringVar(&algorithm, "algorithm", "", "rsa-2048 (the default) or ed25519")
	_ = create.RegisterFlagCompletionFunc("algorithm", cobra.FixedCompletions([]string{"rsa-2048", "ed25519"}, cobra.ShellCompDirectiveNoFileComp))

	activate := &cobra.Command{
		Use:   "activate DOMAIN ID",
		Short: "Make a key the domain's signing key (a rotation: the previous one stops signing but stays)",
		Long: `Make the key the domain's signing key. The previously active key stops signing but stays: keep
its record published until mail signed with it is delivered (a few days), then delete it.
Running processes pick the change up within 30 seconds.`,
		Example: "  sendonce dkim keys activate news.example.com 4",
		Args:    args(2),
		RunE: a.byID(1, func(ctx context.Context, c *client.Client, id int64, argv []string) (answer, error) {
			r, err := c.ActivateDkimKeyWithResponse(ctx, argv[0], id, nil)
			if err := client.Check(r, err); err != nil {
				return answer{}, err
			}
			return dkimKeyAnswer(r.JSON200, "active: SMTP senders sign mail from "+argv[0]+" with it"), nil
		}),
	}

	del := &cobra.Command{
		Use:     "delete DOMAIN ID",
		Short:   "Delete an inactive key (the active one cannot be: activate another first); then remove its record",
		Example: "  sendonce dkim keys delete news.example.com 3",
		Args:    args(2),
		RunE: a.byID(1, func(ctx context.Context, c *client.Client, id int64, argv []string) (answer, error) {
			r, err := c.DeleteDkimKeyWithResponse(ctx, argv[0], id)
			return answer{nil, say("DKIM key %d of %s deleted; its TXT record may go now", id, argv[0])}, client.Check(r, err)
		}),
	}
	keys.AddCommand(list, create, activate, del)
	cmd.AddCommand(keys)
	return cmd
}

// dkimKeyAnswer is a key with the record to publish for it, or the key as JSON.
func dkimKeyAnswer(k *client.DkimKey, state string) answer {
	return answer{k, func(out io.Writer) error {
		fmt.Fprintf(out, "DKIM key %d of %s (selector %s, %s) %s\n\n", k.Id, k.Domain, k.Selector, k.Algorithm, state)
		return printRecord(out, k)
	}}
}

// printRecord prints a key's TXT record as a zone file line: the value in
// quoted strings of at most 255 characters, as DNS keeps it (RFC 1035 §3.3.14).
func printRecord(out io.Writer, k *client.DkimKey) error {
	fmt.Fprintf(out, "%s.\tIN\t%s\t(", k.Record.Name, k.Record.Type)
	v := k.Record.Value
	for len(v) > 0 {
		n := min(len(v), 255)
		fmt.Fprintf(out, " %s", strconv.Quote(v[:n]))
		v = v[n:]
	}
	_, err := fmt.Fprintln(out, " )")
	return err
}
