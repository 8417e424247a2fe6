package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/blocks"
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

// BlocksBench renders a 50-block design (rendered to a template once, as saving
// does) and the same content as hand-typed HTML for recipients messages each, in
// alternating rounds so machine load falls on both alike, and prints each one's
// median cost per message and their ratio.
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
	blocksT, err := render.Parse(subject, bh, bt)
	if err != nil {
		return err
	}
	hh, ht := HandHTML(d)
	handT, err := render.Parse(subject, hh, ht)
	if err != nil {
		return err
	}
	rs := make([]render.Recipient, 1000)
	for i := range rs {
		s := strconv.Itoa(i)
		rs[i] = render.Recipient{Email: "r" + s + "@example.com", Name: "Reader " + s,
			Attributes: []byte(`{"first_name":"Reader` + s + `","plan":"pro","uid":"` + s + `"}`)}
	}
	per := max(recipients/rounds, 1)
	// Each round is timed in CPU time of the process (GC included), which the
	// other work of a shared machine does not inflate as it does wall time.
	run := func(t *render.Templates) (time.Duration, error) {
		start := selfCPU()
		for i := range per {
			if _, err := t.Render(rs[i%len(rs)], "https://example.com/u/x"); err != nil {
				return 0, err
			}
		}
		return time.Duration((selfCPU() - start) * 1e9 / float64(per)), nil
	}
	// copyOut makes a fresh string as long as a message's output, per message:
	// the least a render that returns its output as one string can cost per
	// byte, on this machine under its present load.
	var sink string
	copyOut := func(s string) time.Duration {
		start := selfCPU()
		for range per {
			sink = strings.Clone(s)
		}
		return time.Duration((selfCPU() - start) * 1e9 / float64(per))
	}
	blocksOut, err := blocksT.Render(rs[0], "https://example.com/u/x")
	if err != nil {
		return err
	}
	handOut, err := handT.Render(rs[0], "https://example.com/u/x")
	if err != nil {
		return err
	}
	blocksAll := blocksOut.Subject + blocksOut.HTML + blocksOut.Text
	handAll := handOut.Subject + handOut.HTML + handOut.Text
	var hand, blk, ratio, copyHand, copyBlk []float64
	for i := range rounds {
		a, b := blocksT, handT
		if i%2 == 1 {
			a, b = handT, blocksT // alternate which goes first
		}
		da, err := run(a)
		if err != nil {
			return err
		}
		db, err := run(b)
		if err != nil {
			return err
		}
		if i%2 == 1 {
			da, db = db, da
		}
		blk = append(blk, float64(da.Nanoseconds()))
		hand = append(hand, float64(db.Nanoseconds()))
		ratio = append(ratio, float64(da)/float64(db))
		var ca, ch time.Duration
		if i%2 == 0 {
			ca, ch = copyOut(blocksAll), copyOut(handAll)
		} else {
			ch, ca = copyOut(handAll), copyOut(blocksAll)
		}
		copyBlk = append(copyBlk, float64(ca.Nanoseconds()))
		copyHand = append(copyHand, float64(ch.Nanoseconds()))
	}
	_ = sink
	fmt.Fprintf(w, "blocks bench: %d-block design (%d bytes of HTML template) vs the same content as hand-typed HTML (%d bytes), %d messages each in %d alternating rounds\n",
		nb, len(bh), len(hh), per*rounds, rounds)
	fmt.Fprintf(w, "  output per message (subject, HTML and text): blocks %d bytes, hand-typed HTML %d bytes\n", len(blocksAll), len(handAll))
	fmt.Fprintf(w, "  CPU per message, median of rounds: blocks %.1f µs, hand-typed HTML %.1f µs; blocks/HTML %.2f× (median of per-round ratios %.2f×, range %.2f–%.2f×)\n",
		median(blk)/1e3, median(hand)/1e3, median(blk)/median(hand), median(ratio), slices.Min(ratio), slices.Max(ratio))
	fmt.Fprintf(w, "  a fresh copy of the output alone, median of rounds: blocks %.1f µs, hand-typed HTML %.1f µs\n",
		median(copyBlk)/1e3, median(copyHand)/1e3)
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
