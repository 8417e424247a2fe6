package bench

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/sendonce/sendonce/internal/blocks"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/render"
)

// BlocksDesign is the 50-block design of the blocks bench: 10 rows (one or two
// columns) of headings, text, buttons, images, dividers, spacers, social links and
// a footer, with template actions in text and URLs as a real campaign has them.
func BlocksDesign() blocks.Design {
	var d blocks.Design
	n := 0
	add := func(cols ...[]blocks.Block) {
		r := blocks.Row{}
		for _, c := range cols {
			r.Columns = append(r.Columns, blocks.Column{Blocks: c})
			n += len(c)
		}
		d.Rows = append(d.Rows, r)
	}
	for i := 0; n < 45; i++ {
		s := strconv.Itoa(i)
		if i%2 == 0 {
			add([]blocks.Block{
				{Type: "heading", Level: 2, Text: "Story " + s + " for {{.Name}}"},
				{Type: "text", Text: "Hello {{.Attributes.first_name}}, on the {{.Attributes.plan}} plan this month brought story " + s + ".\nRead on.\n\nA second paragraph of news, kept short."},
				{Type: "image", Src: "https://cdn.example.com/story" + s + ".png", Alt: "Story " + s, URL: "https://example.com/s/" + s},
				{Type: "button", Text: "Read story " + s, URL: "https://example.com/s/" + s + "?u={{.Attributes.uid}}"},
				{Type: "divider"},
			})
		} else {
			add([]blocks.Block{{Type: "heading", Level: 3, Text: "Left " + s}, {Type: "text", Text: "Tips for {{.Name}}."}},
				[]blocks.Block{{Type: "spacer", Height: 10}, {Type: "text", Text: "More for {{.Attributes.plan}}."}, {Type: "button", Text: "Go", URL: "https://example.com/g/" + s}})
		}
	}
	add([]blocks.Block{{Type: "divider"}, {Type: "spacer"}, {Type: "text", Text: "Thanks for reading, {{.Name}}."},
		{Type: "social", Links: []blocks.SocialLink{{Network: "mastodon", URL: "https://mastodon.social/@example"}, {Network: "github", URL: "https://github.com/example"}}},
		{Type: "footer", Text: "Example Ltd, 1 Main St"}})
	return d
}

// HandHTML is the same content as HTML typed by hand today: one tag per block,
// inline styles, no layout tables.
func HandHTML(d blocks.Design) (string, string) {
	var h, t strings.Builder
	h.WriteString(`<div style="max-width:600px;margin:0 auto;font-family:Helvetica,Arial,sans-serif">` + "\n")
	for _, r := range d.Rows {
		for _, c := range r.Columns {
			for _, b := range c.Blocks {
				switch b.Type {
				case "heading":
					h.WriteString(`<h2 style="font-size:22px;color:#222">` + b.Text + "</h2>\n")
				case "text":
					h.WriteString(`<p style="font-size:16px;line-height:1.5;color:#222">` + strings.ReplaceAll(b.Text, "\n", "<br>") + "</p>\n")
				case "image":
					h.WriteString(`<a href="` + b.URL + `"><img src="` + b.Src + `" alt="` + b.Alt + `" width="550" style="display:block;width:100%;height:auto"></a>` + "\n")
				case "button":
					h.WriteString(`<p><a href="` + b.URL + `" style="display:inline-block;background:#1a56db;color:#fff;padding:12px 24px;text-decoration:none">` + b.Text + "</a></p>\n")
				case "divider":
					h.WriteString("<hr>\n")
				case "spacer":
					h.WriteString(`<div style="height:20px"></div>` + "\n")
				case "social":
					h.WriteString(`<p><a href="https://mastodon.social/@example">Mastodon</a> · <a href="https://github.com/example">GitHub</a></p>` + "\n")
				case "footer":
					h.WriteString(`<p style="font-size:12px">` + b.Text + `<br><a href="{{.UnsubscribeURL}}">Unsubscribe</a></p>` + "\n")
				}
				t.WriteString(b.Text + "\n\n")
			}
		}
	}
	h.WriteString("</div>\n")
	return h.String(), t.String()
}

// BlocksBench builds a 50-block design (rendered to a template once, as saving
// does) and the same content as hand-typed HTML for recipients messages each, as
// the executor's send path builds them: render.Prepared.BuildInto into one reused
// set of buffers, with the message's unsubscribe links (the provider reads the
// message before the next is built). For comparison it builds them too as Build
// does, each message a fresh string (the send path before 0.2). Each way runs
// blocks and HTML in alternating rounds, a different one first each round, so
// machine load falls on both alike; it prints each one's median cost per message
// and the ratios.
func BlocksBench(recipients, rounds int, w io.Writer) error {
	d := BlocksDesign()
	nb := 0
	for _, r := range d.Rows {
		for _, c := range r.Columns {
			nb += len(c.Blocks)
		}
	}
	const subject = "News for {{.Name}}"
	bh, bt := blocks.Render(d)
	hh, ht := HandHTML(d)
	b := render.NewRandomBuilder()
	camp := render.Campaign{FromEmail: "news@example.com", FromName: "Example", Subject: subject}
	camp.HTML, camp.Text = bh, bt
	blocksP, err := b.Prepare(camp)
	if err != nil {
		return err
	}
	camp.HTML, camp.Text = hh, ht
	handP, err := b.Prepare(camp)
	if err != nil {
		return err
	}
	rs := make([]render.Recipient, 1000)
	for i := range rs {
		s := strconv.Itoa(i)
		rs[i] = render.Recipient{JobID: "campaign:1:" + s, Email: "r" + s + "@example.com", Name: "Reader " + s,
			Attributes: []byte(`{"first_name":"Reader` + s + `","plan":"pro","uid":"` + s + `"}`)}
	}
	links := render.Links{HTTPS: "https://example.com/u/x", Mailto: "unsubscribe@example.com"}
	var bufs render.Buffers
	var sink int
	type way struct {
		p     *render.Prepared
		reuse bool
	}
	build := func(k way, r render.Recipient) (provider.Message, error) {
		if k.reuse {
			return k.p.BuildInto(&bufs, r, links)
		}
		return k.p.Build(r, links)
	}
	sizes := map[*render.Prepared]int{}
	for _, p := range []*render.Prepared{blocksP, handP} { // both ways build the same message
		a, err := p.Build(rs[0], links)
		if err != nil {
			return err
		}
		c, err := p.BuildInto(&bufs, rs[0], links)
		if err != nil {
			return err
		}
		if a.Subject != c.Subject || a.HTML != c.HTML || a.Text != c.Text {
			return fmt.Errorf("BuildInto built another message than Build")
		}
		sizes[p] = len(a.Subject) + len(a.HTML) + len(a.Text)
	}
	per := max(recipients/rounds, 1)
	// Each run is timed in CPU time of the process (its own GC included), which
	// the other work of a shared machine does not inflate as it does wall time.
	run := func(k way) (float64, error) {
		start := selfCPU()
		for i := range per {
			m, err := build(k, rs[i%len(rs)])
			if err != nil {
				return 0, err
			}
			sink += len(m.HTML) // the provider reads it
		}
		return (selfCPU() - start) * 1e9 / float64(per), nil
	}
	// The send path's rounds first, then Build's: the fresh strings' garbage,
	// which the collector works off later, is not charged to the send path.
	spent := map[way][]float64{}
	ratios := map[bool][]float64{}
	for _, reuse := range []bool{true, false} {
		runtime.GC()
		pair := [2]way{{blocksP, reuse}, {handP, reuse}}
		for i := range rounds {
			a, b := pair[i%2], pair[1-i%2] // alternate which goes first
			da, err := run(a)
			if err != nil {
				return err
			}
			db, err := run(b)
			if err != nil {
				return err
			}
			spent[a], spent[b] = append(spent[a], da), append(spent[b], db)
			n := len(spent[pair[0]]) - 1
			ratios[reuse] = append(ratios[reuse], spent[pair[0]][n]/spent[pair[1]][n])
		}
	}
	ratio, ratioFresh := ratios[true], ratios[false]
	order := []way{{blocksP, true}, {handP, true}, {blocksP, false}, {handP, false}}
	_ = sink
	med := func(k way) float64 { return median(spent[k]) / 1e3 }
	fmt.Fprintf(w, "blocks bench: %d-block design (%d bytes of HTML template) vs the same content as hand-typed HTML (%d bytes), %d messages each way in %d alternating rounds\n",
		nb, len(bh), len(hh), per*rounds, rounds)
	fmt.Fprintf(w, "  output per message (subject, HTML and text): blocks %d bytes, hand-typed HTML %d bytes\n", sizes[blocksP], sizes[handP])
	fmt.Fprintf(w, "  send path (BuildInto, reused buffers), CPU per message, median of rounds: blocks %.1f µs, hand-typed HTML %.1f µs; blocks/HTML %.2f× (median of per-round ratios %.2f×, range %.2f–%.2f×)\n",
		med(order[0]), med(order[1]), med(order[0])/med(order[1]), median(ratio), slices.Min(ratio), slices.Max(ratio))
	fmt.Fprintf(w, "  a fresh string per message (Build), for comparison: blocks %.1f µs, hand-typed HTML %.1f µs; blocks/HTML %.2f× (median of per-round ratios %.2f×)\n",
		med(order[2]), med(order[3]), med(order[2])/med(order[3]), median(ratioFresh))
	return nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
