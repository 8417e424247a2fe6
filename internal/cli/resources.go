package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sendonce/sendonce/client"
)

// The create and edit commands of lists, templates, campaigns and segments. Each
// is a set of flags: create requires some, edit sends only those given (a PATCH;
// segments, replaced whole by the API, are read first and the given flags
// changed). Bodies that are files (--html-file, --text-file) are read as they are.

// setOf reports which flags of cmd the user gave.
type setOf struct{ f *pflag.FlagSet }

func (s setOf) has(name string) bool { return s.f.Changed(name) }

// str is the flag's value when given, else nil (left as it is by an edit).
func str(s setOf, name, v string) *string {
	if !s.has(name) {
		return nil
	}
	return &v
}

// file is the text of the file the flag names when given, else nil.
func file(s setOf, name, path string) (*string, error) {
	if !s.has(name) {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, Usage(fmt.Errorf("--%s: %w", name, err))
	}
	text := string(b)
	return &text, nil
}

// design reads --blocks: a file with a block design (JSON), or nil when not given.
func design(s setOf, path string) (*client.BlockDesign, error) {
	b, err := file(s, "blocks", path)
	if b == nil || err != nil {
		return nil, err
	}
	if !json.Valid([]byte(*b)) {
		return nil, Usage(errors.New("--blocks: the file is not JSON"))
	}
	d := client.BlockDesign(*b)
	return &d, nil
}

// content is what the content flags templates and campaigns share say: the
// bodies --html-file, --text-file, --markdown and --blocks name, and --layout.
type content struct {
	html, text, markdown *string
	blocks               *client.BlockDesign
	layout               *int64
}

// contentFlags reads the content flags that are set; layoutID is --layout's variable.
func contentFlags(s setOf, htmlFile, textFile, mdFile, blocksFile string, layoutID *int64) (content, error) {
	var c content
	var err error
	if c.html, err = file(s, "html-file", htmlFile); err != nil {
		return content{}, err
	}
	if c.text, err = file(s, "text-file", textFile); err != nil {
		return content{}, err
	}
	if c.markdown, err = file(s, "markdown", mdFile); err != nil {
		return content{}, err
	}
	if c.blocks, err = design(s, blocksFile); err != nil {
		return content{}, err
	}
	if s.has("layout") {
		c.layout = layoutID
	}
	return c, nil
}

// contentType is the content type the flags choose: markdown or blocks, nil for HTML.
func contentType[T ~string](c content, markdown, blocks T) *T {
	switch {
	case c.markdown != nil:
		return &markdown
	case c.blocks != nil:
		return &blocks
	}
	return nil
}

func need(s setOf, cmd string, names ...string) error {
	for _, n := range names {
		if !s.has(n) {
			return Usage(fmt.Errorf("%s needs --%s", cmd, n))
		}
	}
	return nil
}

// printMade prints what a create or edit answered: the object with --json, its id
// alone with --quiet (for LIST=$(sendonce lists create … -q)), else a sentence.
func (a *App) printMade(cmd *cobra.Command, quiet bool, v any, kind string, id int64, name, verb string) error {
	switch {
	case a.JSON:
		return printJSON(cmd.OutOrStdout(), v)
	case quiet:
		_, err := fmt.Fprintln(cmd.OutOrStdout(), id)
		return err
	}
	_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %d (%s) %s\n", kind, id, name, verb)
	return err
}

// writeCommands are the create and edit commands of one resource: flags adds the
// resource's flags to both, do makes the request (id 0: create).
func (a *App) writeCommands(kind, example string, required []string, flags func(*pflag.FlagSet),
	do func(cmd *cobra.Command, c *client.Client, s setOf, id int64) (v any, gotID int64, name string, err error)) []*cobra.Command {
	var quiet bool
	run := func(cmd *cobra.Command, argv []string) error {
		s := setOf{cmd.Flags()}
		var id int64
		if len(argv) == 1 {
			var err error
			if id, err = parseID(argv[0]); err != nil {
				return err
			}
		} else if err := need(s, cmd.CommandPath(), required...); err != nil {
			return err
		}
		c, err := a.client()
		if err != nil {
			return err
		}
		v, gotID, name, err := do(cmd, c, s, id)
		if err != nil {
			return err
		}
		verb := "created"
		if id != 0 {
			verb = "updated"
		}
		return a.printMade(cmd, quiet, v, kind, gotID, name, verb)
	}
	create := &cobra.Command{Use: "create", Short: "Create a " + kind + " from flags", Example: example, Args: args(0), RunE: run}
	edit := &cobra.Command{Use: "edit ID", Short: "Change a " + kind + ": only the flags given are changed", Args: args(1), RunE: run}
	for _, c := range []*cobra.Command{create, edit} {
		flags(c.Flags())
		c.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the id")
	}
	return []*cobra.Command{create, edit}
}

func (a *App) listsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "lists", Short: "Create and edit lists"}
	var (
		name, description string
		public            bool
	)
	cmd.AddCommand(a.writeCommands("list", `  LIST=$(sendonce lists create --name Newsletter -q)`, []string{"name"},
		func(f *pflag.FlagSet) {
			f.StringVar(&name, "name", "", "the list's name")
			f.StringVar(&description, "description", "", "what the list is for")
			f.BoolVar(&public, "public", false, "offered on the public sign-up form")
		},
		func(cmd *cobra.Command, c *client.Client, s setOf, id int64) (any, int64, string, error) {
			var pub *bool
			if s.has("public") {
				pub = &public
			}
			if id == 0 {
				r, err := c.CreateListWithResponse(cmd.Context(), nil, client.ListCreate{Name: name,
					Description: str(s, "description", description), Public: pub})
				if err := client.Check(r, err); err != nil {
					return nil, 0, "", err
				}
				return r.JSON201, r.JSON201.Id, r.JSON201.Name, nil
			}
			r, err := c.UpdateListWithResponse(cmd.Context(), id, client.ListUpdate{Name: str(s, "name", name),
				Description: str(s, "description", description), Public: pub})
			if err := client.Check(r, err); err != nil {
				return nil, 0, "", err
			}
			return r.JSON200, r.JSON200.Id, r.JSON200.Name, nil
		})...)
	return cmd
}

func (a *App) poolsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "pools", Short: "List, create and edit sender pools (senders in order, failing over to the next)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the account's sender pools, each with its senders in order (the primary first)",
		Args:  args(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			all, err := everyPage(func(cursor *string) ([]client.SenderPool, *string, error) {
				r, err := c.ListSenderPoolsWithResponse(cmd.Context(), &client.ListSenderPoolsParams{Limit: client.Ptr(500), Cursor: cursor})
				if err := client.Check(r, err); err != nil {
					return nil, nil, err
				}
				return r.JSON200.Data, r.JSON200.NextCursor, nil
			})
			if err != nil {
				return err
			}
			return printList(a, cmd.OutOrStdout(), all, []string{"ID", "NAME", "SENDERS (PRIMARY FIRST)", "UPDATED"},
				func(p client.SenderPool) []string {
					ids := make([]string, 0, len(p.Senders))
					for _, s := range p.Senders {
						ids = append(ids, itoa(s))
					}
					return []string{itoa(p.Id), p.Name, strings.Join(ids, " → "), when(&p.UpdatedAt)}
				})
		},
	})
	var (
		name    string
		senders []int64
	)
	cmd.AddCommand(a.writeCommands("sender pool", `  POOL=$(sendonce pools create --name relays --sender 2 --sender 3 -q)   # 2 is the primary
  sendonce campaigns create --name 'March news' --from news@example.com --list 1 --pool $POOL --template 4`,
		[]string{"name", "sender"},
		func(f *pflag.FlagSet) {
			f.StringVar(&name, "name", "", "the pool's name")
			f.Int64SliceVar(&senders, "sender", nil, "a sender id, in order: the first is the primary (repeatable; on edit the list replaces the pool's)")
		},
		func(cmd *cobra.Command, c *client.Client, s setOf, id int64) (any, int64, string, error) {
			if id == 0 {
				r, err := c.CreateSenderPoolWithResponse(cmd.Context(), nil, client.SenderPoolCreate{Name: name, Senders: senders})
				if err := client.Check(r, err); err != nil {
					return nil, 0, "", err
				}
				return r.JSON201, r.JSON201.Id, r.JSON201.Name, nil
			}
			var ids *[]int64
			if s.has("sender") {
				ids = &senders
			}
			r, err := c.UpdateSenderPoolWithResponse(cmd.Context(), id, client.SenderPoolUpdate{Name: str(s, "name", name), Senders: ids})
			if err := client.Check(r, err); err != nil {
				return nil, 0, "", err
			}
			return r.JSON200, r.JSON200.Id, r.JSON200.Name, nil
		})...)
	return cmd
}

func (a *App) templatesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "templates", Short: "Create and edit templates (transactional messages and campaigns)"}
	var name, subject, htmlFile, textFile, mdFile, blocksFile, sample string
	var layoutID int64
	cmd.AddCommand(a.writeCommands("template",
		`  sendonce templates create --name receipt --subject 'Your receipt {{.Attributes.order}}' --html-file receipt.html`,
		[]string{"name", "subject"},
		func(f *pflag.FlagSet) {
			f.StringVar(&name, "name", "", "the template's name")
			f.StringVar(&subject, "subject", "", "the subject, a Go template")
			f.StringVar(&htmlFile, "html-file", "", "a file with the HTML body (a Go template)")
			f.StringVar(&textFile, "text-file", "", "a file with the plain-text body (a Go template)")
			f.StringVar(&sample, "sample-data", "", "the .Attributes previews use, a JSON object")
			f.StringVar(&mdFile, "markdown", "", "a file with a Markdown body (Go template actions work inside); html and text are made from it")
			f.StringVar(&blocksFile, "blocks", "", "a file with a block design (JSON, docs/content.md#blocks); html and text are rendered from it")
			f.Int64Var(&layoutID, "layout", 0, "the layout id framing the Markdown (default: the account's default layout; 0 on edit: back to it)")
		},
		func(cmd *cobra.Command, c *client.Client, s setOf, id int64) (any, int64, string, error) {
			cf, err := contentFlags(s, htmlFile, textFile, mdFile, blocksFile, &layoutID)
			if err != nil {
				return nil, 0, "", err
			}
			ct := contentType(cf, client.TemplateCreateContentTypeMarkdown, client.TemplateCreateContentTypeBlocks)
			html, text, md, blocks, lay := cf.html, cf.text, cf.markdown, cf.blocks, cf.layout
			var data *json.RawMessage
			if s.has("sample-data") {
				raw := json.RawMessage(sample)
				if !json.Valid(raw) {
					return nil, 0, "", Usage(errors.New("--sample-data must be a JSON object"))
				}
				data = &raw
			}
			if id == 0 {
				r, err := c.CreateTemplateWithResponse(cmd.Context(), nil, client.TemplateCreate{Name: name, Subject: subject,
					Html: html, Text: text, SampleData: data, ContentType: ct, Markdown: md, Blocks: blocks, LayoutId: lay})
				if err := client.Check(r, err); err != nil {
					return nil, 0, "", err
				}
				return r.JSON201, r.JSON201.Id, r.JSON201.Name, nil
			}
			up := client.TemplateUpdate{Name: str(s, "name", name),
				Subject: str(s, "subject", subject), Html: html, Text: text, SampleData: data,
				ContentType: (*client.TemplateUpdateContentType)(ct), Markdown: md, Blocks: blocks, LayoutId: lay}
			body, err := jsonWithNulls(up, clearsLayout(lay))
			if err != nil {
				return nil, 0, "", err
			}
			r, err := c.UpdateTemplateWithBodyWithResponse(cmd.Context(), id, "application/json", body)
			if err := client.Check(r, err); err != nil {
				return nil, 0, "", err
			}
			return r.JSON200, r.JSON200.Id, r.JSON200.Name, nil
		})...)
	cmd.AddCommand(a.templateDuplicateCmd())
	return cmd
}

func (a *App) layoutsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "layouts", Short: "Create and edit layouts (the frames Markdown content goes in)"}
	var name, htmlFile, textFile, headerFile, footerFile string
	var brand [4]string // primary, background, text, link
	brandFlags := [4]string{"brand-primary", "brand-background", "brand-text", "brand-link"}
	var isDefault bool
	cmd.AddCommand(a.writeCommands("layout",
		`  sendonce layouts create --name brand --html-file brand.html --text-file brand.txt --default \
    --header-file header.html --footer-file footer.html --brand-primary '#0b6e4f' --brand-link '#0b6e4f'`,
		[]string{"name", "html-file"},
		func(f *pflag.FlagSet) {
			f.StringVar(&name, "name", "", "the layout's name")
			f.StringVar(&htmlFile, "html-file", "", "a file with the HTML frame: {{content}} once, where the body goes")
			f.StringVar(&textFile, "text-file", "", "a file with the text frame: {{content}} once (or empty)")
			f.StringVar(&headerFile, "header-file", "", "a file with the header, an HTML fragment put at {{header}} (or before the body)")
			f.StringVar(&footerFile, "footer-file", "", "a file with the footer, an HTML fragment put at {{footer}} (or after the body)")
			for i, what := range []string{"a button's background", "the colour around the content", "the text's colour", "the links' colour"} {
				f.StringVar(&brand[i], brandFlags[i], "", "brand colour #rrggbb: "+what+" where a block design sets none, and {{"+strings.Replace(brandFlags[i], "-", ".", 1)+"}} in the frame ('' on edit: none)")
			}
			f.BoolVar(&isDefault, "default", false, "make it the account's default layout (--default=false: no longer)")
		},
		func(cmd *cobra.Command, c *client.Client, s setOf, id int64) (any, int64, string, error) {
			html, err := file(s, "html-file", htmlFile)
			if err != nil {
				return nil, 0, "", err
			}
			text, err := file(s, "text-file", textFile)
			if err != nil {
				return nil, 0, "", err
			}
			header, err := file(s, "header-file", headerFile)
			if err != nil {
				return nil, 0, "", err
			}
			footer, err := file(s, "footer-file", footerFile)
			if err != nil {
				return nil, 0, "", err
			}
			// Only the colours given are sent: the others are kept on edit.
			colours, given := &client.LayoutBrand{}, false
			targets := [4]**string{&colours.Primary, &colours.Background, &colours.Text, &colours.Link}
			for i, fl := range brandFlags {
				if s.has(fl) {
					*targets[i], given = &brand[i], true
				}
			}
			if !given {
				colours = nil
			}
			var def *bool
			if s.has("default") {
				def = &isDefault
			}
			if id == 0 {
				r, err := c.CreateLayoutWithResponse(cmd.Context(), nil, client.LayoutCreate{Name: name, Html: *html, Text: text,
					Header: header, Footer: footer, Brand: colours, Default: def})
				if err := client.Check(r, err); err != nil {
					return nil, 0, "", err
				}
				return r.JSON201, r.JSON201.Id, r.JSON201.Name, nil
			}
			r, err := c.UpdateLayoutWithResponse(cmd.Context(), id, client.LayoutUpdate{Name: str(s, "name", name), Html: html, Text: text,
				Header: header, Footer: footer, Brand: colours, Default: def})
			if err := client.Check(r, err); err != nil {
				return nil, 0, "", err
			}
			return r.JSON200, r.JSON200.Id, r.JSON200.Name, nil
		})...)
	return cmd
}

// campaignWriteCommands are campaigns create and edit.
func (a *App) campaignWriteCommands() []*cobra.Command {
	var (
		name, from, fromName, subject, htmlFile, textFile, replyTo, mdFile, blocksFile, deliverAt, window string
		template, segment, layoutID, pool                                                                 int64
		lists                                                                                             []int64
	)
	return a.writeCommands("campaign",
		`  sendonce campaigns create --name 'March news' --from news@example.com --list 1 \
      --subject 'Hello {{.Name}}' --html-file march.html --text-file march.txt`,
		[]string{"name", "from"},
		func(f *pflag.FlagSet) {
			f.StringVar(&name, "name", "", "the campaign's name (not shown to recipients)")
			f.StringVar(&from, "from", "", "the From address")
			f.StringVar(&fromName, "from-name", "", "the From name")
			f.StringVar(&replyTo, "reply-to", "", "the Reply-To address")
			f.StringVar(&subject, "subject", "", "the subject, a Go template (or --template's)")
			f.StringVar(&htmlFile, "html-file", "", "a file with the HTML body (a Go template)")
			f.StringVar(&textFile, "text-file", "", "a file with the plain-text body (a Go template)")
			f.Int64Var(&template, "template", 0, "take subject and bodies from this template id")
			f.Int64SliceVar(&lists, "list", nil, "send to this list id (repeatable)")
			f.Int64Var(&segment, "segment", 0, "send to this segment id")
			f.StringVar(&mdFile, "markdown", "", "a file with a Markdown body (Go template actions work inside); html and text are made from it")
			f.StringVar(&blocksFile, "blocks", "", "a file with a block design (JSON, docs/content.md#blocks); html and text are rendered from it")
			f.Int64Var(&layoutID, "layout", 0, "the layout id framing the Markdown (default: the account's default layout; 0 on edit: back to it)")
			f.StringVar(&deliverAt, "deliver-at-local", "", "send each recipient at this local time, HH:MM in their zone ('' on edit: at once)")
			f.StringVar(&window, "window", "", "send only in this window: DAYS HH:MM-HH:MM [ZONE], such as 'mon-fri 09:00-17:00 Europe/Berlin'")
			f.Int64Var(&pool, "pool", 0, "send through this sender pool id (its first usable sender, failing over to the next)")
		},
		func(cmd *cobra.Command, c *client.Client, s setOf, id int64) (any, int64, string, error) {
			cf, err := contentFlags(s, htmlFile, textFile, mdFile, blocksFile, &layoutID)
			if err != nil {
				return nil, 0, "", err
			}
			ct := contentType(cf, client.CampaignCreateContentTypeMarkdown, client.CampaignCreateContentTypeBlocks)
			html, text, md, blocks, lay := cf.html, cf.text, cf.markdown, cf.blocks, cf.layout
			var win *client.SendWindow
			if s.has("window") {
				if win, err = parseWindow(window); err != nil {
					return nil, 0, "", err
				}
			}
			var tpl, seg *int64
			var ids *[]int64
			if s.has("template") {
				tpl = &template
			}
			if s.has("segment") {
				seg = &segment
			}
			if s.has("list") {
				ids = &lists
			}
			var pl *int64
			if s.has("pool") {
				pl = &pool
			}
			if id == 0 {
				r, err := c.CreateCampaignWithResponse(cmd.Context(), nil, client.CampaignCreate{Name: name, FromEmail: from,
					FromName: str(s, "from-name", fromName), ReplyTo: str(s, "reply-to", replyTo),
					Subject: str(s, "subject", subject), HtmlTemplate: html, TextTemplate: text,
					TemplateId: tpl, ListIds: ids, SegmentId: seg, ContentType: ct, Markdown: md, Blocks: blocks, LayoutId: lay,
					DeliverAtLocal: str(s, "deliver-at-local", deliverAt), SendWindow: win, PoolId: pl})
				if err := client.Check(r, err); err != nil {
					return nil, 0, "", err
				}
				return r.JSON201, r.JSON201.Id, r.JSON201.Name, nil
			}
			up := client.CampaignUpdate{Name: str(s, "name", name),
				FromEmail: str(s, "from", from), FromName: str(s, "from-name", fromName), ReplyTo: str(s, "reply-to", replyTo),
				Subject: str(s, "subject", subject), HtmlTemplate: html, TextTemplate: text,
				TemplateId: tpl, ListIds: ids, SegmentId: seg,
				ContentType: (*client.CampaignUpdateContentType)(ct), Markdown: md, Blocks: blocks, LayoutId: lay,
				DeliverAtLocal: str(s, "deliver-at-local", deliverAt), SendWindow: win, PoolId: pl}
			body, err := jsonWithNulls(up, clearsLayout(lay))
			if err != nil {
				return nil, 0, "", err
			}
			r, err := c.UpdateCampaignWithBodyWithResponse(cmd.Context(), id, "application/json", body)
			if err := client.Check(r, err); err != nil {
				return nil, 0, "", err
			}
			return r.JSON200, r.JSON200.Id, r.JSON200.Name, nil
		})
}

// engagementFlags is --engaged with its campaign or days as the API's condition
// (nil for none); the API checks the campaign and the bounds.
func engagementFlags(engaged string, campaign int64, days int, includeScanners bool) (*client.SegmentEngagement, error) {
	if engaged == "none" {
		return nil, nil
	}
	negated := strings.HasPrefix(engaged, "not-")
	kind := strings.TrimPrefix(engaged, "not-")
	if kind != "opened" && kind != "clicked" {
		return nil, Usage(fmt.Errorf("--engaged must be opened, clicked, not-opened, not-clicked or none, not %q", engaged))
	}
	people := !includeScanners
	e := &client.SegmentEngagement{Kind: client.SegmentEngagementKind(kind), Negated: &negated, PeopleOnly: &people}
	if campaign != 0 {
		e.CampaignId = &campaign
	}
	if days != 0 {
		e.WithinDays = &days
	}
	return e, nil
}

func (a *App) segmentsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "segments", Short: "Create and edit segments (subscribers chosen by a condition)"}
	var (
		name, match, engaged string
		lists                []int64
		statuses             []string
		engagedCampaign      int64
		engagedDays          int
		includeScanners      bool
	)
	cmd.AddCommand(a.writeCommands("segment", `  sendonce segments create --name 'Pro in France' --match '$.plan == "pro" && $.country == "FR"'`,
		[]string{"name"},
		func(f *pflag.FlagSet) {
			f.StringVar(&name, "name", "", "the segment's name")
			f.StringVar(&match, "match", "", `the condition on the attributes, a JSONPath predicate such as '$.plan == "pro"'`)
			f.Int64SliceVar(&lists, "list", nil, "only members of this list id (repeatable)")
			f.StringSliceVar(&statuses, "status", nil, "only subscribers in this status (repeatable)")
			f.StringVar(&engaged, "engaged", "", "an engagement condition: opened, clicked, not-opened or not-clicked "+
				"(not-: received and did not); none removes it")
			f.Int64Var(&engagedCampaign, "engaged-campaign", 0, "the campaign id --engaged is about")
			f.IntVar(&engagedDays, "engaged-days", 0, "--engaged about any message in the last this many days")
			f.BoolVar(&includeScanners, "include-scanners", false, "--engaged counts hits suspected of being scanners too")
		},
		func(cmd *cobra.Command, c *client.Client, s setOf, id int64) (any, int64, string, error) {
			in := client.SegmentInput{Name: name}
			if id != 0 { // the API replaces a segment whole: start from what it is
				r, err := c.GetSegmentWithResponse(cmd.Context(), id)
				if err := client.Check(r, err); err != nil {
					return nil, 0, "", err
				}
				g := r.JSON200
				st := make([]client.SegmentInputStatuses, 0, len(g.Statuses))
				for _, x := range g.Statuses {
					st = append(st, client.SegmentInputStatuses(x))
				}
				in = client.SegmentInput{Name: g.Name, Match: &g.Match, ListIds: &g.ListIds, Statuses: &st,
					CreatedAfter: g.CreatedAfter, CreatedBefore: g.CreatedBefore, Engagement: g.Engagement}
				if s.has("name") {
					in.Name = name
				}
			}
			if s.has("match") {
				in.Match = &match
			}
			if s.has("list") {
				in.ListIds = &lists
			}
			if s.has("status") {
				st := make([]client.SegmentInputStatuses, 0, len(statuses))
				for _, x := range statuses {
					st = append(st, client.SegmentInputStatuses(x))
				}
				in.Statuses = &st
			}
			if s.has("engaged") {
				e, err := engagementFlags(engaged, engagedCampaign, engagedDays, includeScanners)
				if err != nil {
					return nil, 0, "", err
				}
				in.Engagement = e
			}
			if id == 0 {
				r, err := c.CreateSegmentWithResponse(cmd.Context(), nil, in)
				if err := client.Check(r, err); err != nil {
					return nil, 0, "", err
				}
				return r.JSON201, r.JSON201.Id, r.JSON201.Name, nil
			}
			r, err := c.UpdateSegmentWithResponse(cmd.Context(), id, in)
			if err := client.Check(r, err); err != nil {
				return nil, 0, "", err
			}
			return r.JSON200, r.JSON200.Id, r.JSON200.Name, nil
		})...)
	cmd.AddCommand(a.segmentMembersCmd())
	return cmd
}

// segmentMembersCmd is `segments members ID`: who the segment selects now, a
// page at a time, and how many (exact up to 100,000) on standard error.
func (a *App) segmentMembersCmd() *cobra.Command {
	var p paging
	cmd := &cobra.Command{
		Use:   "members ID",
		Short: "List the subscribers a segment selects now, oldest first",
		Long: `List the subscribers segment ID selects now (its filter evaluated at each request), oldest first,
one page at a time: the next page's --cursor is printed on standard error, with how many there are
(exact up to 100,000); --all follows every page.`,
		Example: "  sendonce segments members 3\n  sendonce segments members 3 --all --json | jq -r '.[].email'",
		Args:    args(1),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if err := p.check(); err != nil {
				return err
			}
			id, err := parseID(argv[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			total, err := c.CountSegmentSubscribersWithResponse(cmd.Context(), id)
			if err := client.Check(total, err); err != nil {
				return err
			}
			items, next, err := pages(p, func(cursor *string) ([]client.Subscriber, *string, error) {
				r, err := c.ListSegmentSubscribersWithResponse(cmd.Context(), id,
					&client.ListSegmentSubscribersParams{Limit: client.Ptr(p.limit), Cursor: cursor})
				if err := client.Check(r, err); err != nil {
					return nil, nil, err
				}
				return r.JSON200.Data, r.JSON200.NextCursor, nil
			})
			if err != nil {
				return err
			}
			if total.JSON200.Exact {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d members\n", total.JSON200.Count)
			} else {
				fmt.Fprintf(cmd.ErrOrStderr(), "more than %d members (not counted further)\n", total.JSON200.Count)
			}
			return printPages(a, cmd, p, items, next,
				func(items []client.Subscriber, next *string) any {
					return client.SubscriberPage{Data: items, NextCursor: next}
				},
				[]string{"ID", "EMAIL", "NAME", "STATUS", "CREATED"},
				func(s client.Subscriber) []string {
					return []string{itoa(s.Id), s.Email, s.Name, string(s.Status), when(&s.CreatedAt)}
				})
		},
	}
	cmd.Flags().IntVar(&p.limit, "limit", 50, "members a page, 1 to 500")
	cmd.Flags().StringVar(&p.cursor, "cursor", "", "the page after this cursor (printed after a page)")
	cmd.Flags().BoolVar(&p.all, "all", false, "every page")
	return cmd
}

// clearsLayout is the members an edit sets to null: layout_id for --layout 0
// (the account's default layout again), which the SDK's types cannot send.
func clearsLayout(lay *int64) []string {
	if lay != nil && *lay == 0 {
		return []string{"layout_id"}
	}
	return nil
}

// jsonWithNulls is v as JSON with the members nulls set to null.
func jsonWithNulls(v any, nulls []string) (io.Reader, error) {
	b, err := json.Marshal(v)
	if err != nil || len(nulls) == 0 {
		return bytes.NewReader(b), err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, n := range nulls {
		m[n] = json.RawMessage("null")
	}
	b, err = json.Marshal(m)
	return bytes.NewReader(b), err
}
