package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// usersCmd manages the account's people: invitations and the member list.
func (a *App) usersCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "users", Short: "Invite people to the account and list its members"}
	var role string
	invite := &cobra.Command{
		Use:   "invite EMAIL",
		Short: "Invite an address as a member (the link is mailed to it)",
		Args:  args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			body := client.InvitationCreate{Email: strings.TrimSpace(argv[0]), Role: client.MemberRole(role)}
			resp, err := c.CreateInvitationWithResponse(cmd.Context(), nil, body)
			if err := client.Check(resp, err); err != nil {
				return err
			}
			inv := resp.JSON201
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), inv)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "invited %s as %s (invitation %d, until %s)\n", inv.Email, inv.Role, inv.Id, when(&inv.ExpiresAt))
			return nil
		},
	}
	invite.Flags().StringVar(&role, "role", "viewer", "owner, admin, editor, approver or viewer")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the members and pending invitations",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			resp, err := c.ListMembersWithResponse(cmd.Context())
			if err := client.Check(resp, err); err != nil {
				return err
			}
			l := resp.JSON200
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), l)
			}
			w := cmd.OutOrStdout()
			for _, m := range l.Members {
				twoFactor := ""
				if m.TwoFactor {
					twoFactor = "  2FA"
				}
				fmt.Fprintf(w, "%-8d %-40s %s%s\n", m.UserId, m.Email, m.Role, twoFactor)
			}
			for _, i := range l.Invitations {
				fmt.Fprintf(w, "%-8s %-40s %s  invited, until %s\n", "-", i.Email, i.Role, when(&i.ExpiresAt))
			}
			return nil
		},
	}
	cmd.AddCommand(invite, list)
	return cmd
}
