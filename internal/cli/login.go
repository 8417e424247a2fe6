package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sendonce/sendonce/client"
)

// login is the file `sendonce login` writes.
type login struct {
	URL    string `json:"url"`
	APIKey string `json:"api_key"`
}

func (a *App) configPath() (string, error) {
	if a.ConfigPath != "" {
		return a.ConfigPath, nil
	}
	if p := os.Getenv("SENDONCE_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "sendonce", "config.json"), nil
}

func (a *App) readLogin() (login, error) {
	var l login
	p, err := a.configPath()
	if err != nil {
		return l, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return l, err
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("%s: %w", p, err)
	}
	return l, nil
}

func (a *App) loginCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "login",
		Short: "Check a URL and API key against the service and save them for the other commands",
		Long: `Check a URL and API key against the service (GET /v1/account) and save them, readable by
you only, for the other client commands. The key is read from --api-key, $SENDONCE_API_KEY, or
else one line of standard input (so it stays out of the shell history).`,
		Example: "  sendonce login --url http://127.0.0.1:8080 < key.txt",
		Args:    args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			l := login{URL: a.URL, APIKey: a.APIKey}
			if l.URL == "" {
				l.URL = os.Getenv("SENDONCE_URL")
			}
			if l.APIKey == "" {
				l.APIKey = os.Getenv("SENDONCE_API_KEY")
			}
			if l.URL == "" {
				return Usage(errors.New("login needs --url (or $SENDONCE_URL)"))
			}
			if l.APIKey == "" {
				key, err := readKey(cmd)
				if err != nil {
					return err
				}
				l.APIKey = key
			}
			c, err := client.New(client.Config{URL: l.URL, APIKey: l.APIKey, UserAgent: "sendonce-cli"})
			if err != nil {
				return err
			}
			acc, err := account(cmd.Context(), c)
			if err != nil {
				return err
			}
			p, err := a.configPath()
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return err
			}
			b, _ := json.MarshalIndent(l, "", "  ")
			if err := os.WriteFile(p, append(b, '\n'), 0o600); err != nil {
				return err
			}
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"account": acc, "config": p})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s as account %d (%s); saved in %s\n", l.URL, acc.Id, acc.Name, p)
			return nil
		},
	}
}

// readKey reads the API key from standard input: from a terminal after a prompt,
// without echo; from a pipe or file silently, its first line (a prompt there
// would land in a script's output).
func readKey(cmd *cobra.Command) (string, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(cmd.ErrOrStderr(), "API key: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(cmd.ErrOrStderr())
		if err != nil {
			return "", err
		}
		in = strings.NewReader(string(b))
	}
	line, _ := bufio.NewReader(in).ReadString('\n')
	if key := strings.TrimSpace(line); key != "" {
		return key, nil
	}
	return "", Usage(errors.New("login needs an API key: --api-key, $SENDONCE_API_KEY, or one line on standard input"))
}

func account(ctx context.Context, c *client.Client) (*client.Account, error) {
	resp, err := c.GetAccountWithResponse(ctx)
	if err := client.Check(resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}
