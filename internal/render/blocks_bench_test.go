package render_test

import (
	"bytes"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/bench"
	"github.com/sendonce/sendonce/internal/blocks"
	"github.com/sendonce/sendonce/internal/render"
)

// BenchmarkBlocksOutput splits the cost of `sendonce bench --blocks`: the same
// two templates (the 50-block design and its content as minimal hand-typed HTML)
// rendered by Render, which returns each message as a fresh string, and into one
// reused buffer, in alternating batches, reporting the process's CPU time per
// message of each. The difference between the two is what making a fresh string
// of each message's bytes costs (memory the caches do not hold, and the garbage
// collector), and it is most of what a block design costs more.
func BenchmarkBlocksOutput(b *testing.B) {
	d := bench.BlocksDesign()
	const subject, unsub = "News for {{.Name}}", "https://example.com/u/x"
	bh, bt := blocks.Render(d)
	hh, ht := bench.HandHTML(d)
	tpls := map[string]*render.Templates{}
	for name, src := range map[string][2]string{"blocks": {bh, bt}, "hand": {hh, ht}} {
		t, err := render.Parse(subject, src[0], src[1])
		if err != nil {
			b.Fatal(err)
		}
		tpls[name] = t
	}
	var buf bytes.Buffer
	for name, t := range tpls { // both ways write the same bytes
		r := render.Recipient{Email: "a@example.org", Name: "Ada <3", Attributes: []byte(`{"plan":"pro","uid":"7"}`)}
		out, err := t.Render(r, unsub)
		if err != nil {
			b.Fatal(err)
		}
		if err := render.RenderIntoForTest(t, &buf, r, unsub); err != nil || buf.String() != out.Subject+out.HTML+out.Text {
			b.Fatalf("%s: the reused buffer holds other bytes than Render returns (%v)", name, err)
		}
	}
	rs := make([]render.Recipient, 1000)
	for i := range rs {
		s := strconv.Itoa(i)
		rs[i] = render.Recipient{Email: "r" + s + "@example.com", Name: "Reader " + s,
			Attributes: []byte(`{"first_name":"Reader` + s + `","plan":"pro","uid":"` + s + `"}`)}
	}
	ways := map[string]func(*render.Templates, render.Recipient) error{
		"string": func(t *render.Templates, r render.Recipient) error { _, err := t.Render(r, unsub); return err },
		"reused-buffer": func(t *render.Templates, r render.Recipient) error {
			return render.RenderIntoForTest(t, &buf, r, unsub)
		},
	}
	order := [][2]string{{"blocks", "string"}, {"hand", "string"}, {"blocks", "reused-buffer"}, {"hand", "reused-buffer"}}
	spent := map[[2]string]time.Duration{}
	n := 0
	for b.Loop() {
		for i := range order {
			k := order[(i+n)%len(order)] // a different one goes first each round
			start := cpuTime()
			for j := range len(rs) {
				if err := ways[k[1]](tpls[k[0]], rs[j]); err != nil {
					b.Fatal(err)
				}
			}
			spent[k] += cpuTime() - start
		}
		n++
	}
	for _, k := range order {
		b.ReportMetric(float64(spent[k].Nanoseconds())/float64(n*len(rs))/1e3, k[0]+"-"+k[1]+"-cpu-µs/msg")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
