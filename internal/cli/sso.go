package cli

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// ssoCmd reads and changes the account's single sign-on (OpenID Connect)
// settings. The client secret is read from standard input, never from a flag
// (a command line is visible to every user of the machine), and never printed:
// the API does not return it.
func (a *App) ssoCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "sso", Short: "Show, set or remove the account's single sign-on (OpenID Connect)"}
	get := &cobra.Command{
		Use:   "get",
		Short: "Show the single sign-on settings (the client secret is never shown)",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			resp, err := c.GetAccountSSOWithResponse(cmd.Context())
			if err := client.Check(resp, err); err != nil {
				return err
			}
			return a.printSSO(cmd, resp.JSON200)
		},
	}

	var in client.SSOSettingsInput
	var role string
	var disabled, secretStdin bool
	set := &cobra.Command{
		Use:   "set --issuer URL --client-id ID --domain DOMAIN… [--client-secret-stdin]",
		Short: "Set the single sign-on settings (the client secret: one line on standard input)",
		Long: "Set the account's OpenID Connect provider. The client secret is read from standard input with\n" +
			"--client-secret-stdin (required the first time; left out, the stored one is kept).\n" +
			"Register the printed redirect URL at the provider.",
		Args: args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if secretStdin {
				line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				secret := strings.TrimSpace(line)
				if secret == "" {
					return Usage(errors.New("--client-secret-stdin: no secret on standard input"))
				}
				in.ClientSecret = &secret
			}
			in.DefaultRole = client.SSOSettingsInputDefaultRole(role)
			in.Enabled = !disabled
			if in.AllowedDomains == nil {
				in.AllowedDomains = []string{}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			resp, err := c.SetAccountSSOWithResponse(cmd.Context(), in)
			if err := client.Check(resp, err); err != nil {
				return err
			}
			return a.printSSO(cmd, resp.JSON200)
		},
	}
	f := set.Flags()
	f.StringVar(&in.IssuerUrl, "issuer", "", "the provider's issuer URL (https), as its discovery document names it")
	f.StringVar(&in.ClientId, "client-id", "", "the client id registered at the provider")
	f.StringSliceVar(&in.AllowedDomains, "domain", nil, "an email domain the provider signs in (repeat, or comma-separated)")
	f.StringVar(&role, "default-role", "viewer", "the role of a person who joins through the provider")
	f.BoolVar(&disabled, "disabled", false, "store the settings but do not offer the sign-in")
	f.BoolVar(&secretStdin, "client-secret-stdin", false, "read the client secret from the first line of standard input")

	del := &cobra.Command{
		Use:   "delete",
		Short: "Remove the single sign-on settings (members sign in by password or email link)",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			resp, err := c.DeleteAccountSSOWithResponse(cmd.Context())
			if err := client.Check(resp, err); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "single sign-on removed")
			return nil
		},
	}
	cmd.AddCommand(get, set, del)
	return cmd
}

func (a *App) printSSO(cmd *cobra.Command, s *client.SSOSettings) error {
	if a.JSON {
		return printJSON(cmd.OutOrStdout(), s)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "issuer:        %s\n", s.IssuerUrl)
	fmt.Fprintf(w, "client id:     %s\n", s.ClientId)
	fmt.Fprintf(w, "client secret: %s\n", map[bool]string{true: "set (never shown)", false: "not set"}[s.ClientSecretSet])
	fmt.Fprintf(w, "domains:       %s\n", strings.Join(s.AllowedDomains, ", "))
	fmt.Fprintf(w, "default role:  %s\n", s.DefaultRole)
	fmt.Fprintf(w, "enabled:       %t\n", s.Enabled)
	fmt.Fprintf(w, "redirect URL:  %s (register it at the provider)\n", s.RedirectUrl)
	return nil
}
