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

// login is a URL and key `sendonce login` saved.
type login struct {
	URL    string `json:"url"`
	APIKey string `json:"api_key"`
}

// loginFile is the file `sendonce login` writes: the default login at the top
// (the file's whole content before profiles came, so older files still read) and
// the named ones of --profile.
type loginFile struct {
	login
	Profiles map[string]login `json:"profiles,omitempty"`
}

// profile is the --profile flag, else $SENDONCE_PROFILE ("" is the default login).
func (a *App) profile() string {
	if a.Profile != "" {
		return a.Profile
	}
	return os.Getenv("SENDONCE_PROFILE")
}

func (a *App) readFile() (loginFile, string, error) {
	var f loginFile
	p, err := a.configPath()
	if err != nil {
		return f, p, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return f, p, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, p, fmt.Errorf("%s: %w", p, err)
	}
	return f, p, nil
}

func writeFile(p string, f loginFile) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, append(b, '\n'), 0o600)
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

// readLogin is the saved login of the selected profile.
func (a *App) readLogin() (login, error) {
	f, p, err := a.readFile()
	name := a.profile()
	if name == "" || err != nil {
		if err != nil && name != "" && errors.Is(err, os.ErrNotExist) {
			return login{}, Usage(fmt.Errorf("no profile %q: run `sendonce login --profile %s`", name, name))
		}
		return f.login, err
	}
	l, ok := f.Profiles[name]
	if !ok {
		return l, Usage(fmt.Errorf("no profile %q in %s: run `sendonce login --profile %s`", name, p, name))
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
			f, p, err := a.readFile()
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			if name := a.profile(); name != "" {
				if f.Profiles == nil {
					f.Profiles = map[string]login{}
				}
				f.Profiles[name] = l
			} else {
				f.login = l
			}
			if err := writeFile(p, f); err != nil {
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

func (a *App) logoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Forget the saved URL and API key (of --profile, else the default login)",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, p, err := a.readFile()
			if errors.Is(err, os.ErrNotExist) {
				return Usage(errors.New("not logged in: there is no login file"))
			}
			if err != nil {
				return err
			}
			name := a.profile()
			if name == "" {
				if f.login == (login{}) {
					return Usage(errors.New("not logged in (the default login is empty)"))
				}
				f.login = login{}
			} else {
				if _, ok := f.Profiles[name]; !ok {
					return Usage(fmt.Errorf("no profile %q in %s", name, p))
				}
				delete(f.Profiles, name)
			}
			if f.login == (login{}) && len(f.Profiles) == 0 {
				err = os.Remove(p)
			} else {
				err = writeFile(p, f)
			}
			if err != nil {
				return err
			}
			who := "the default login"
			if name != "" {
				who = "profile " + name
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged out: forgot %s in %s\n", who, p)
			return nil
		},
	}
}

func (a *App) whoamiCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "whoami",
		Short: "Show the service, account and profile the client commands use",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, url, err := a.clientURL()
			if err != nil {
				return err
			}
			acc, err := account(cmd.Context(), c)
			if err != nil {
				return err
			}
			profile := a.profile()
			if a.JSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"url": url, "profile": profile, "account": acc})
			}
			if profile == "" {
				profile = "(default)"
			}
			return table(cmd.OutOrStdout(), []string{"URL", "PROFILE", "ACCOUNT", "NAME"},
				[][]string{{url, profile, itoa(acc.Id), acc.Name}})
		},
	}
}

func account(ctx context.Context, c *client.Client) (*client.Account, error) {
	resp, err := c.GetAccountWithResponse(ctx)
	if err := client.Check(resp, err); err != nil {
		return nil, err
	}
	return resp.JSON200, nil
}
