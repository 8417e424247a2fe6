package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/servicetest"
)

// `sendonce mcp` is an MCP server on standard input and output: an MCP client
// starts the binary (as Claude Desktop does), lists its tools and calls one,
// which reaches the service with the key the client commands use.
func TestCLIMCPOverStdio(t *testing.T) {
	t.Parallel()
	svc := servicetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	cmd := exec.Command(servicetest.Binary(), "mcp")
	cmd.Env = append(servicetest.CleanEnv(), "SENDONCE_URL="+svc.URL, "SENDONCE_API_KEY="+svc.APIKey)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	require.Equal(t, "sendonce", cs.InitializeResult().ServerInfo.Name)

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 11)

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_account"})
	require.NoError(t, err)
	require.False(t, res.IsError)
	var acc struct {
		ID int64 `json:"id"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(b, &acc))
	require.NotZero(t, acc.ID)

	require.NoError(t, cs.Close(), "closing stdin ends the server cleanly")
	require.Equal(t, 0, cmd.ProcessState.ExitCode())
}

// Without a service configured, `sendonce mcp` exits with the usage code before
// speaking the protocol, saying what to configure.
func TestCLIMCPNeedsAService(t *testing.T) {
	t.Parallel()
	r := sendonce(t, []string{"SENDONCE_CONFIG=" + t.TempDir() + "/none.json"}, "", "mcp")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "no service configured")
	require.Empty(t, r.stdout)
}
