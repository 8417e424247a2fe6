package cli

import (
	"errors"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/internal/mcpserver"
)

// mcpCmd is `sendonce mcp`: the account's tools for an AI assistant, served over
// the Model Context Protocol on standard input and output (the assistant's
// client starts the command). It calls the API with the key the other client
// commands use, so that key's permissions are the assistant's.
func (a *App) mcpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the account to an AI assistant over the Model Context Protocol (stdio)",
		Long: `Run a Model Context Protocol server on standard input and output, for an MCP client such as
Claude Desktop to start. Its tools read campaigns (with their stats and reports), subscribers,
lists, templates, segments and the account, and draft a campaign; none approves, schedules,
sends or deletes anything. It calls the API with the URL and key the other client commands use
(--url/--api-key, SENDONCE_URL/SENDONCE_API_KEY, or the login file and --profile), so the key's
permissions apply: with a read-only key a draft is refused. See docs/mcp.md.`,
		Example: `  sendonce mcp --profile assistant
  # Claude Desktop (claude_desktop_config.json):
  #   {"mcpServers": {"sendonce": {"command": "sendonce", "args": ["mcp", "--profile", "assistant"]}}}`,
		Args: args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			err = mcpserver.New(c, cmd.Root().Version).Run(cmd.Context(), &mcp.StdioTransport{})
			if cmd.Context().Err() != nil || errors.Is(err, io.EOF) {
				return nil // interrupted, or the client closed its end: done
			}
			return err
		},
	}
}
