package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// triggerCmd is `events trigger TYPE`: one sample event of any type, signed and
// POSTed to a receiver as events forward posts live ones, for testing how the
// receiver handles a type the account has not produced yet. The event is made
// here, not by the service: it is in no event log and reaches no endpoint.
func (a *App) triggerCmd() *cobra.Command {
	var to, secret string
	cmd := &cobra.Command{
		Use:   "trigger TYPE --to URL",
		Short: "POST one signed sample event of TYPE to a receiver, to test it (made locally, not by the service)",
		Long: `POST one sample event of TYPE (any type of docs/events.md's catalogue) to --to, signed as the
service's event endpoints and events forward sign (Standard Webhooks: webhook-id, webhook-timestamp,
webhook-signature under --secret; one is made and printed when none is given). The event has the
shape the service delivers for that type (its typed schema in openapi.yaml) with example values, and
an id starting evt_test_. It is made by this command: the service does not know it, no endpoint of
the account receives it and it is in no event log (for a delivery by the service itself, POST
/v1/event-endpoints/{id}/ping sends endpoint.ping to that endpoint). Prints the receiver's status;
a receiver that does not answer 2xx is exit code 1.`,
		Example: `  sendonce events trigger send.failed --to http://localhost:3000/hook --secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
  sendonce events trigger subscriber.unsubscribed --to http://localhost:3000/hook --json`,
		Args:      args(1),
		ValidArgs: eventTypes(),
		RunE: func(cmd *cobra.Command, argv []string) error {
			typ := client.EventType(argv[0])
			if !typ.Valid() {
				return Usage(fmt.Errorf("%q is not an event type; one of:\n  %s", argv[0], strings.Join(eventTypes(), "\n  ")))
			}
			if to == "" {
				return Usage(errors.New("events trigger needs --to URL"))
			}
			given := secret != ""
			secret, err := signingSecret(secret)
			if err != nil {
				return err
			}
			if !given {
				fmt.Fprintf(cmd.ErrOrStderr(), "the signing secret is %s\n", secret)
			}
			b := make([]byte, 8)
			if _, err := rand.Read(b); err != nil {
				return err
			}
			now := time.Now()
			ev, err := sampleEvent(typ, "evt_test_"+hex.EncodeToString(b), now)
			if err != nil {
				return err
			}
			status, err := deliver(cmd.Context(), &http.Client{Timeout: 10 * time.Second}, to, secret, ev, now)
			if err != nil {
				return err
			}
			if a.JSON {
				if err := printJSON(cmd.OutOrStdout(), map[string]any{"status": status, "event": ev}); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s  %-24s %s -> %d\n", ev.Timestamp.Format(time.RFC3339), ev.Type, ev.Id, status)
			}
			if status < 200 || status > 299 {
				return fmt.Errorf("the receiver answered %d %s", status, http.StatusText(status))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the receiver's URL")
	cmd.Flags().StringVar(&secret, "secret", "", "the whsec_ signing secret (default: a new one, printed)")
	return cmd
}
