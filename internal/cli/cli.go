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
	URL, APIKey, ConfigPath string
	JSON                    bool
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

// AddCommands adds the client commands and their shared flags to root.
func AddCommands(root *cobra.Command) {
	(&App{Terminal: isTerminal}).register(root)
}

func (app *App) register(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&app.URL, "url", "", "the service's base URL (default: $SENDONCE_URL, then the login file)")
	f.StringVar(&app.APIKey, "api-key", "", "the API key (default: $SENDONCE_API_KEY, then the login file)")
	f.StringVar(&app.ConfigPath, "config", "", "the login file (default: $SENDONCE_CONFIG, else sendonce/config.json in the user's config directory)")
	f.BoolVar(&app.JSON, "json", false, "print JSON (one document, or one line per event) for scripts")
	root.AddGroup(&cobra.Group{ID: "client", Title: "Client commands (talk to a running service over the API):"})
	for _, c := range []*cobra.Command{app.loginCmd(), app.subscribersCmd(), app.campaignsCmd(), app.messagesCmd(),
		app.suppressionsCmd(), app.eventsCmd(), app.usersCmd()} {
		c.GroupID = "client"
		root.AddCommand(c)
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return Usage(err) })
}

// ExitCodesHelp is the exit-code table for the root command's help.
const ExitCodesHelp = exitCodesHelped

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// client makes the SDK client from the flags, the environment and the login file.
func (a *App) client() (*client.Client, error) {
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
			return nil, err
		}
		if url == "" {
			url = saved.URL
		}
		if key == "" {
			key = saved.APIKey
		}
	}
	if url == "" || key == "" {
		return nil, Usage(errors.New("no service configured: run `sendonce login`, or set SENDONCE_URL and SENDONCE_API_KEY"))
	}
	return client.New(client.Config{URL: url, APIKey: key, UserAgent: "sendonce-cli"})
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
