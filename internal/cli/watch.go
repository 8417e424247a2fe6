package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/sendonce/sendonce/client"
)

// watchPoll is how often --watch reads the campaign's stats, the authoritative
// counts; the event stream moves the display between two reads.
const watchPoll = time.Second

// sendTypes are the events --watch follows.
var sendTypes = []string{"send.sent", "send.failed", "send.unknown", "send.suppressed",
	"campaign.started", "campaign.paused", "campaign.resumed", "campaign.cancelled", "campaign.sent"}

// progressView draws a watched campaign: a bar on a terminal, lines elsewhere.
type progressView interface {
	update(s *client.CampaignStats)
	done(s *client.CampaignStats)
}

// watch follows campaign id from the event stream (after cursor after) until it is
// sent or cancelled, then prints the final counts.
func (a *App) watch(cmd *cobra.Command, c *client.Client, id int64, after string) error {
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	events := make(chan client.StreamEvent, 256)
	go func() {
		for ev, err := range c.Stream(ctx, client.StreamOptions{Types: sendTypes, After: after}) {
			if err != nil {
				return // the stats poll carries on alone
			}
			select {
			case events <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()

	var view progressView
	switch {
	case a.JSON:
		view = quietView{}
	case a.Terminal(cmd.ErrOrStderr()):
		view = newBarView(cmd.ErrOrStderr(), id, 100*time.Millisecond)
	default:
		view = &lineView{w: cmd.ErrOrStderr(), id: id}
	}
	stats, err := campaignStats(ctx, c, id)
	if err != nil {
		return err
	}
	// seen counts the send.* events of this campaign: exact when the stream started
	// before the approval, and moving between two reads of the stats.
	var seen client.SendCounts
	view.update(merge(stats, seen))
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	for !finished(stats.Status) {
		refresh := false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-events:
			if campaignOf(ev) != id {
				continue
			}
			if count(&seen, string(ev.Type)) {
				view.update(merge(stats, seen))
			} else {
				refresh = true // a campaign.* event: the state changed
			}
		case <-tick.C:
			refresh = true
		}
		if refresh {
			if stats, err = campaignStats(ctx, c, id); err != nil {
				return err
			}
			view.update(merge(stats, seen))
		}
	}
	view.done(stats)
	out := cmd.OutOrStdout()
	if a.JSON {
		if err := printJSON(out, stats); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "campaign %d %s: %s\n", id, stats.Status, countsText(stats))
	}
	if stats.Status != client.CampaignStatusSent || stats.Counts.Failed > 0 || stats.Counts.Unknown > 0 {
		return errIncomplete
	}
	return nil
}

func finished(s client.CampaignStatus) bool {
	return s == client.CampaignStatusSent || s == client.CampaignStatusCancelled || s == client.CampaignStatusFailed
}

func campaignOf(ev client.StreamEvent) int64 {
	id, _ := ev.Data["campaign_id"].(float64)
	return int64(id)
}

// count adds one send.* event to n; it reports false for other events.
func count(n *client.SendCounts, typ string) bool {
	switch typ {
	case "send.sent":
		n.Sent++
	case "send.failed":
		n.Failed++
	case "send.unknown":
		n.Unknown++
	case "send.suppressed":
		n.Suppressed++
	default:
		return false
	}
	return true
}

// merge is what --watch shows: for each outcome the larger of the last stats read
// and the events seen since the approval. Each is at most the truth (the stats lag
// behind the events that follow them, the events behind a stream that started
// late), so the larger is the closer and the display never moves backwards. The
// rest of the total is shown as queued.
func merge(stats *client.CampaignStats, seen client.SendCounts) *client.CampaignStats {
	m := *stats
	n := &m.Counts
	n.Sent, n.Failed = max(n.Sent, seen.Sent), max(n.Failed, seen.Failed)
	n.Unknown, n.Suppressed = max(n.Unknown, seen.Unknown), max(n.Suppressed, seen.Suppressed)
	n.Sending, n.Queued = 0, max(m.Total-settled(&m), 0)
	return &m
}

// settled is how many of the campaign's sends have their final state.
func settled(s *client.CampaignStats) int64 {
	n := s.Counts
	return n.Sent + n.Failed + n.Unknown + n.Suppressed + n.Cancelled
}

// barView is the terminal's view: one bar of settled sends over the total, with
// the counts in its description and the library's rate and time left.
type barView struct {
	bar *progressbar.ProgressBar
	w   io.Writer
	id  int64
	now func() time.Time // the clock the rate is measured on (tests set it)

	// The first reading: the rate and the time left are measured from it. The
	// library's own estimate averages its last samples, and a stats read that
	// moves nothing is a sample of zero, so it read 0s for most of a campaign.
	start     time.Time
	startDone int64
	started   bool
}

func newBarView(w io.Writer, id int64, throttle time.Duration) *barView {
	return &barView{id: id, w: w, now: time.Now, bar: progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(false), // the description carries the time left (pace)
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(throttle),
		progressbar.OptionSetRenderBlankState(true),
		// The spinner turns on each redraw (every stats read and event) instead of
		// on a goroutine of the library's own, which ran until the bar finished:
		// a watch that ended early (Ctrl-C, an error) left it ticking.
		progressbar.OptionSetSpinnerChangeInterval(0),
	)}
}

func (v *barView) update(s *client.CampaignStats) {
	if s.Total > 0 && v.bar.GetMax64() != s.Total {
		v.bar.ChangeMax64(s.Total)
	}
	done, now := settled(s), v.now()
	if !v.started {
		v.start, v.startDone, v.started = now, done, true
	}
	v.bar.Describe(describe(v.id, s) + pace(done-v.startDone, s.Total-done, now.Sub(v.start)))
	_ = v.bar.Set64(done)
}

// pace is the rate of n sends settled in elapsed and the time the left ones take
// at that rate ("" before anything settled).
func pace(n, left int64, elapsed time.Duration) string {
	if n <= 0 || elapsed <= 0 {
		return ""
	}
	rate := float64(n) / elapsed.Seconds()
	text := fmt.Sprintf(" · %.1f/s", rate)
	if left > 0 {
		text += " · " + time.Duration(float64(left)/rate*float64(time.Second)).Round(time.Second).String() + " left"
	}
	return text
}

func (v *barView) done(s *client.CampaignStats) {
	v.update(s)
	_ = v.bar.Finish()
	fmt.Fprintln(v.w) // Finish leaves the cursor at the bar's end
}

func describe(id int64, s *client.CampaignStats) string {
	n := s.Counts
	return fmt.Sprintf("campaign %d %s · sent %d · queued %d · failed %d", id, s.Status, n.Sent, n.Queued+n.Sending, n.Failed+n.Unknown)
}

// lineView prints a line when the counts change, at most once per stats read or
// event, for pipes and logs.
type lineView struct {
	w    io.Writer
	id   int64
	last string
	at   time.Time
}

func (v *lineView) update(s *client.CampaignStats) {
	line := describe(v.id, s) + fmt.Sprintf(" (%d/%d)", settled(s), s.Total)
	if line == v.last || time.Since(v.at) < watchPoll/2 && !finished(s.Status) {
		return
	}
	v.last, v.at = line, time.Now()
	fmt.Fprintln(v.w, line)
}

func (v *lineView) done(s *client.CampaignStats) { v.at = time.Time{}; v.update(s) }

// quietView draws nothing: with --json only the final document is printed.
type quietView struct{}

func (quietView) update(*client.CampaignStats) {}
func (quietView) done(*client.CampaignStats)   {}
