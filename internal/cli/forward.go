package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// forwardCmd is `events forward`: the account's live events, each POSTed to a
// local receiver signed as the service's event endpoints sign (Standard Webhooks),
// so a receiver can be built and tested against real events without exposing it.
func (a *App) forwardCmd() *cobra.Command {
	var (
		to, secret string
		types      []string
	)
	cmd := &cobra.Command{
		Use:   "forward --to URL",
		Short: "POST the account's live events to a local URL, signed (Standard Webhooks), until interrupted",
		Long: `POST each of the account's events, as it happens, to --to: the event object as the body and
the webhook-id, webhook-timestamp and webhook-signature headers of the Standard Webhooks scheme,
signed with --secret (a whsec_ secret; one is made and printed when none is given). One line per
delivery: the event type and the receiver's status. A receiver's failure is printed, not retried.`,
		Example: "  sendonce events forward --to http://localhost:3000/hook --type send.failed",
		Args:    args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return Usage(errors.New("events forward needs --to URL"))
			}
			secret, err := signingSecret(secret)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			errw := cmd.ErrOrStderr()
			fmt.Fprintf(errw, "forwarding events to %s; the signing secret is %s\n", to, secret)
			hc := &http.Client{Timeout: 10 * time.Second}
			for ev, err := range c.Stream(cmd.Context(), client.StreamOptions{Types: types, Reconnects: 1000}) {
				if err != nil {
					if cmd.Context().Err() != nil {
						return nil
					}
					return err
				}
				status, err := deliver(cmd.Context(), hc, to, secret, ev.Event, time.Now())
				line := fmt.Sprintf("%s  %-24s -> %d", ev.Timestamp.UTC().Format(time.RFC3339), ev.Type, status)
				if err != nil {
					line = fmt.Sprintf("%s  %-24s -> %v", ev.Timestamp.UTC().Format(time.RFC3339), ev.Type, err)
				}
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the receiver's URL")
	cmd.Flags().StringVar(&secret, "secret", "", "the whsec_ signing secret (default: a new one, printed)")
	cmd.Flags().StringArrayVar(&types, "type", nil, "only events of this type (repeatable)")
	return cmd
}

// signingSecret is the --secret of the commands that sign deliveries: secret, or
// a new one when it is empty; one that is not whsec_ and base64 is a usage error.
func signingSecret(secret string) (string, error) {
	if secret == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return "whsec_" + base64.StdEncoding.EncodeToString(b), nil
	}
	if !strings.HasPrefix(secret, "whsec_") || client.Sign(secret, "", time.Time{}, nil) == "" {
		return "", Usage(errors.New("--secret must be whsec_ followed by base64"))
	}
	return secret, nil
}

// deliver POSTs ev to url signed with secret and returns the receiver's status.
func deliver(ctx context.Context, hc *http.Client, url, secret string, ev client.Event, now time.Time) (int, error) {
	body, err := json.Marshal(ev)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sendonce-cli")
	req.Header.Set("webhook-id", ev.Id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", client.Sign(secret, ev.Id, now, body))
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
