package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// answer is what a command prints after its API call: body with --json (nothing
// when body is nil), human without.
type answer struct {
	body  any
	human func(io.Writer) error
}

// byID is the RunE of a command whose argument at index arg is an id: it reads the
// id (a usage error before anything connects), connects, lets call make the API
// call with the command's context, and prints call's answer.
func (a *App) byID(arg int, call func(ctx context.Context, c *client.Client, id int64, argv []string) (answer, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, argv []string) error {
		id, err := parseID(argv[arg])
		if err != nil {
			return err
		}
		c, err := a.client()
		if err != nil {
			return err
		}
		ans, err := call(cmd.Context(), c, id, argv)
		if err != nil {
			return err
		}
		return a.reply(cmd.OutOrStdout(), ans)
	}
}

// reply prints ans to out: its body with --json, its human part without.
func (a *App) reply(out io.Writer, ans answer) error {
	if a.JSON {
		if ans.body == nil {
			return nil
		}
		return printJSON(out, ans.body)
	}
	return ans.human(out)
}

// say is an answer's human part that prints one line.
func say(format string, v ...any) func(io.Writer) error {
	return func(w io.Writer) error {
		fmt.Fprintf(w, format+"\n", v...)
		return nil
	}
}
