// Package mcpserver is `sendonce mcp`: a Model Context Protocol server whose tools
// let an assistant read an account's campaigns, subscribers, lists, templates,
// segments and reports, and draft a campaign. It is a client of the public API
// like the command line, through the Go SDK only, so the API key it runs with
// decides what it may do: a read-only key can read but its draft is refused (403),
// and that refusal is the tool's error.
//
// No tool approves, schedules, sends, pauses, cancels, edits or deletes anything:
// a draft waits for a person to approve it. (TestNoToolCanSend holds the list.)
package mcpserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sendonce/sendonce/client"
	"github.com/sendonce/sendonce/internal/optional"
)

// Page sizes: a listing returns at most maxLimit items (defaultLimit when the
// call names none), so one answer stays small enough for a model's context; the
// next page is asked for with the answer's next_cursor.
const (
	defaultLimit = 20
	maxLimit     = 100
)

// New returns the server with every tool, calling the API through c; version is
// the release it reports to the client.
func New(c *client.Client, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sendonce", Title: "sendonce", Version: version}, &mcp.ServerOptions{
		Instructions: "Tools over one sendonce account (email campaigns), with the permissions of the API key the " +
			"server runs with. Listings are paged: pass next_cursor back as cursor for more. draft_campaign only " +
			"creates a draft; nothing here approves, schedules or sends — a person approves a draft in the " +
			"dashboard or with `sendonce campaigns approve`.",
	})
	t := tools{c: c}
	read := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: optional.Of(false)}

	mcp.AddTool(s, &mcp.Tool{Name: "get_account", Annotations: read,
		Description: "The account the API key belongs to: id, name, unsubscribe scope, four-eyes rule."}, t.getAccount)
	mcp.AddTool(s, &mcp.Tool{Name: "list_campaigns", Annotations: read,
		Description: "One page of the account's campaigns (summaries, no templates), optionally of one status, oldest or newest first."}, t.listCampaigns)
	mcp.AddTool(s, &mcp.Tool{Name: "get_campaign", Annotations: read,
		Description: "One campaign in full: status, sender, audience (lists, segment), subject and templates (each cut at 16 KB)."}, t.getCampaign)
	mcp.AddTool(s, &mcp.Tool{Name: "get_campaign_stats", Annotations: read,
		Description: "A campaign's send counts by status and its report: delivery, bounces, complaints, unsubscribes, " +
			"opens and clicks (people and totals), rates, top recipient domains and its tracked links (at most 50)."}, t.getCampaignStats)
	mcp.AddTool(s, &mcp.Tool{Name: "list_subscribers", Annotations: read,
		Description: "One page of subscribers, optionally of one status and/or members of one list."}, t.listSubscribers)
	mcp.AddTool(s, &mcp.Tool{Name: "search_subscribers", Annotations: read,
		Description: "Subscribers whose address starts with a prefix (case-insensitive), e.g. \"ada@\" or \"ada@example.com\"."}, t.searchSubscribers)
	mcp.AddTool(s, &mcp.Tool{Name: "get_subscriber", Annotations: read,
		Description: "One subscriber, by id or by exact email address, with their attributes."}, t.getSubscriber)
	mcp.AddTool(s, &mcp.Tool{Name: "list_lists", Annotations: read,
		Description: "One page of the account's lists with their member counts."}, t.listLists)
	mcp.AddTool(s, &mcp.Tool{Name: "list_templates", Annotations: read,
		Description: "One page of the account's templates (name, subject, language; not their bodies)."}, t.listTemplates)
	mcp.AddTool(s, &mcp.Tool{Name: "list_segments", Annotations: read,
		Description: "One page of the account's segments (saved audience filters) with their rules."}, t.listSegments)
	mcp.AddTool(s, &mcp.Tool{Name: "draft_campaign",
		Annotations: &mcp.ToolAnnotations{Title: "Draft a campaign", DestructiveHint: optional.Of(false), OpenWorldHint: optional.Of(false)},
		Description: "Create a campaign as a draft (status draft): nothing is sent, scheduled or approved. A person " +
			"reviews and approves it in the dashboard or with `sendonce campaigns approve ID`. Give the content " +
			"(subject with html and/or text, Go templates over {{.Name}}, {{.Email}}, {{.Attributes.x}}) or a " +
			"template_id, and the audience as list_ids (none: every confirmed subscriber) and an optional segment_id."}, t.draftCampaign)
	return s
}

// tools holds the client every tool calls.
type tools struct{ c *client.Client }

// page is the paging input every listing takes.
type page struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"items per page, 1 to 100 (default 20)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page; empty for the first page"`
}

// params checks p and returns it as the API's limit and cursor.
func (p page) params() (*int, *string, error) {
	if p.Limit < 0 || p.Limit > maxLimit {
		return nil, nil, fmt.Errorf("limit must be 1 to %d (got %d)", maxLimit, p.Limit)
	}
	limit := p.Limit
	if limit == 0 {
		limit = defaultLimit
	}
	var cursor *string
	if p.Cursor != "" {
		cursor = &p.Cursor
	}
	return &limit, cursor, nil
}

// apiError is err as a tool reports it: an API refusal named by its status, the
// problem type's last word and its detail, with the permission a 403 lacked, so
// the model (and the person reading) can tell "not allowed" from "not found".
func apiError(err error) error {
	var e *client.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("the sendonce API could not be reached: %w", err)
	}
	msg := strings.TrimPrefix(e.Error(), "sendonce: ")
	if kind := e.Type[strings.LastIndexAny(e.Type, "/")+1:]; kind != "" {
		msg += " [" + kind + "]"
	}
	if p := e.Problem.MissingPermission; p != nil && *p != "" && !strings.Contains(msg, *p) {
		msg += "; the API key lacks the permission " + *p
	}
	if e.Status == http.StatusForbidden {
		msg += "; the API key this server runs with is not allowed to do this"
	}
	return fmt.Errorf("the sendonce API refused: %s", msg)
}

// call runs one API call through client.Check and returns its body, or the
// tool's error.
func call[R interface{ StatusCode() int }, T any](resp R, err error, body func(R) *T) (*T, error) {
	if err := client.Check(resp, err); err != nil {
		return nil, apiError(err)
	}
	if v := body(resp); v != nil {
		return v, nil
	}
	return nil, errors.New("the sendonce API answered without a body")
}

// next is a page's next cursor as the tools return it ("" at the end).
func next(c *string) string {
	if c == nil {
		return ""
	}
	return *c
}
