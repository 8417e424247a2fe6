// Package cli is the client half of the sendonce command line: commands that talk
// to a running service over its API, through the Go SDK (package client) and
// nothing else of the server. main adds them beside the server commands.
package cli

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sendonce/sendonce/client"
)

// Exit codes, for scripts.
const (
	ExitOK          = 0 // done
	ExitError       = 1 // anything else: the service unreachable, a 5xx, a local failure
	ExitUsage       = 2 // bad flags or arguments, or no URL/API key configured
	ExitNotFound    = 3 // the API answered 404: no such subscriber, campaign, suppression
	ExitRefused     = 4 // the API refused the request (409 conflict, 422 invalid, other 4xx)
	ExitAuth        = 5 // the API key was refused (401, 403)
	ExitIncomplete  = 6 // a watched campaign ended cancelled, or with failed or unknown sends
	exitCodesHelped = `Exit codes: 0 done; 1 other error (unreachable, 5xx); 2 usage or missing configuration;
3 not found (404); 4 refused (409, 422, other 4xx); 5 API key refused (401, 403);
6 a watched campaign ended cancelled, failed (it could not start), or with failed or unknown sends.`
)

// App holds what the client commands share: the flags that say where the service
// is and how to print, and the terminal test (tests replace it).
type App struct {
	URL, APIKey, ConfigPath, Profile string
	JSON                             bool
	// Terminal reports whether w is a terminal, where progress bars are drawn; in a
	// pipe the commands print plain lines instead.
	Terminal func(w io.Writer) bool
}

// usageError is a mistake in the command line (exit 2).
type usageError struct{ error }

// Usage wraps err as a command-line mistake (exit code 2).
func Usage(err error) error { return usageError{err} }

// incomplete is a watched campaign that did not end as sent with every send out.
var errIncomplete = errors.New("the campaign did not send to everyone")

// ExitCode maps an error from a command to the documented exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var u usageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	if errors.Is(err, errIncomplete) {
		return ExitIncomplete
	}
	switch code := client.StatusCode(err); {
	case code == http.StatusNotFound:
		return ExitNotFound
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return ExitAuth
	case code >= 400 && code < 500 && code != http.StatusTooManyRequests:
		return ExitRefused
	}
	return ExitError
}

// ErrorText is err as the command line prints it after "sendonce: ": an API
// refusal as its status and detail, each field error that says more than the
// detail after it (the SDK's own text starts with "sendonce:" too, and a 422's
// detail is usually its one field error again).
func ErrorText(err error) string {
	text := err.Error()
	var e *client.Error
	if !errors.As(err, &e) {
		return text
	}
	msg := e.Problem.Title
	if e.Problem.Detail != nil && *e.Problem.Detail != "" {
		msg = *e.Problem.Detail
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Problem.Errors != nil {
		for _, f := range *e.Problem.Errors {
			if f.Detail != msg {
				msg += fmt.Sprintf("; %s: %s", f.Pointer, f.Detail)
			}
		}
	}
	return strings.Replace(text, e.Error(), fmt.Sprintf("%d %s", e.Status, msg), 1)
}

// AddCommands adds the client commands and their shared flags to root.
func AddCommands(root *cobra.Command) {
	(&App{Terminal: isTerminal}).register(root)
}

func (app *App) register(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&app.URL, "url", "", "the service's base URL (default: $SENDONCE_URL, then the login file)")
	f.StringVar(&app.APIKey, "api-key", "", "the API key (default: $SENDONCE_API_KEY, then the login file)")
	f.StringVar(&app.ConfigPath, "config", "", "the login file (default: $SENDONCE_CONFIG, else sendonce/config.json in the user's config directory)")
	f.StringVar(&app.Profile, "profile", "", "use (or, with login, save) this named login of the login file (default: $SENDONCE_PROFILE)")
	f.BoolVar(&app.JSON, "json", false, "print JSON (one document, or one line per event) for scripts")
	root.AddGroup(&cobra.Group{ID: "client", Title: "Client commands (talk to a running service over the API):"})
	for _, c := range []*cobra.Command{app.loginCmd(), app.logoutCmd(), app.whoamiCmd(), app.subscribersCmd(), app.listsCmd(), app.poolsCmd(), app.templatesCmd(), app.layoutsCmd(),
		app.campaignsCmd(), app.segmentsCmd(), app.mediaCmd(), app.messagesCmd(), app.suppressionsCmd(), app.eventsCmd(), app.auditCmd(), app.usersCmd(), app.ssoCmd(), app.bounceMailboxCmd(), app.dkimCmd(), app.mcpCmd()} {
		c.GroupID = "client"
		root.AddCommand(c)
	}
	// `senders` is also the server's (sendonce senders rotate-secrets): create
	// and edit join it there.
	senders := app.sendersCmd()
	for _, c := range root.Commands() {
		if c.Name() == "senders" {
			c.Short = senders.Short + "; rotate-secrets (server)"
			c.AddCommand(senders.Commands()...)
			senders = nil
			break
		}
	}
	if senders != nil {
		senders.GroupID = "client"
		root.AddCommand(senders)
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return Usage(err) })
	suggest(root)
}

// suggest makes every command that only groups others (and the root) refuse an
// unknown subcommand with a usage error that names the nearest ones; cobra
// suggests only for a root without a Run of its own, and a group would print its
// help and exit 0. Commands added after AddCommands get this from SuggestCommands.
func suggest(c *cobra.Command) {
	if c.HasSubCommands() && c.Args == nil || !c.HasParent() {
		c.Args = unknownSubcommand
		if c.Run == nil && c.RunE == nil {
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	for _, sub := range c.Commands() {
		suggest(sub)
	}
}

// SuggestCommands applies the unknown-command suggestions to the whole tree under
// root; call it once every command is added.
func SuggestCommands(root *cobra.Command) { suggest(root) }

func unknownSubcommand(cmd *cobra.Command, argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", argv[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default
	}
	if s := cmd.SuggestionsFor(argv[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return Usage(fmt.Errorf("%s\n\nRun '%s --help' for its commands.", msg, cmd.CommandPath())) //nolint:staticcheck // ST1005: printed whole to the user as cobra's own usage errors are, not wrapped
}

// ExitCodesHelp is the exit-code table for the root command's help.
const ExitCodesHelp = exitCodesHelped

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// client makes the SDK client from the flags, the environment and the login file.
func (a *App) client() (*client.Client, error) {
	c, _, err := a.clientURL()
	return c, err
}

// clientURL is client and the URL it talks to.
func (a *App) clientURL() (*client.Client, string, error) {
	url, key := a.URL, a.APIKey
	if url == "" {
		url = os.Getenv("SENDONCE_URL")
	}
	if key == "" {
		key = os.Getenv("SENDONCE_API_KEY")
	}
	if url == "" || key == "" {
		saved, err := a.readLogin()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, "", err
		}
		if url == "" {
			url = saved.URL
		}
		if key == "" {
			key = saved.APIKey
		}
	}
	if url == "" || key == "" {
		return nil, "", Usage(errors.New("no service configured: run `sendonce login`, or set SENDONCE_URL and SENDONCE_API_KEY"))
	}
	c, err := client.New(client.Config{URL: url, APIKey: key, UserAgent: "sendonce-cli"})
	return c, url, err
}

// args is cobra.ExactArgs with a usage error.
func args(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) != n {
			return Usage(fmt.Errorf("%s takes %d argument(s), got %d (see --help)", cmd.CommandPath(), n, len(a)))
		}
		return nil
	}
}
