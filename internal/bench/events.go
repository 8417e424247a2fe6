package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/event"
	"github.com/sendonce/sendonce/internal/export"
	"github.com/sendonce/sendonce/internal/store"
)

// Events bench shape: each transaction writes, for each of the two accounts, one
// acknowledgement's batch of eventsPerAck outcomes, and every eventsRowEvery-th
// transaction eventsRows event rows as well (the account's other events).
const (
	eventsPerAck   = 50
	eventsRowEvery = 10
	eventsRows     = 50
	eventsRepeat   = 7
)

// EventsBench is `sendonce bench --events N`: an account with N events (most of
// them in acknowledgements' batches, a tenth in rows) beside another tenant with as
// many, written a transaction per acknowledgement; then each reader of the events
// timed at the start, the middle and the end of the account's events, with fresh
// statistics and without (as the writes left them): the pull API and stream with
// and without type filters, newest first, a delivery's events by id, the fan-out's
// pick and its search for endpoints behind, a rewind by time, the export. Each
// figure is the median of eventsRepeat runs, in milliseconds. Last, the retention
// deletes them all.
func EventsBench(ctx context.Context, pool *pgxpool.Pool, n int, database string, out io.Writer) error {
	fmt.Fprintf(out, "events bench: %d events in each of two accounts, %s\n", n, database)
	accounts := account.NewService(pool)
	var ids []int64
	for _, name := range []string{"bench events", "bench events (other tenant)"} {
		a, _, err := accounts.Create(ctx, name)
		if err != nil {
			return err
		}
		ids = append(ids, a.ID)
	}
	q := store.New(pool)
	began, written, tx := time.Now(), 0, int64(0)
	base := time.Now().Add(-24 * time.Hour)
	for written < n {
		rows := 0
		if tx%eventsRowEvery == 0 {
			rows = eventsRows
		}
		if err := q.BenchEventsFill(ctx, store.BenchEventsFillParams{Accounts: ids, N: eventsPerAck, Rows: int32(rows),
			Seq: tx, At: base.Add(time.Duration(tx) * time.Millisecond)}); err != nil {
			return fmt.Errorf("fill: %w", err)
		}
		written += eventsPerAck + rows
		tx++
	}
	secs := time.Since(began).Seconds()
	fmt.Fprintf(out, "fill: %d events per account in %d transactions, %.1fs: %.0f events/s\n", written, tx, secs, float64(2*written)/secs)

	r := eventsReaders{pool: pool, svc: event.NewService(pool, event.Guard{}), account: ids[0],
		batches: tx, since: base.Add(time.Duration(tx/2) * time.Millisecond)}
	if err := r.run(ctx, "as written", out); err != nil {
		return err
	}
	if err := q.BenchEventsVacuumAnalyze(ctx); err != nil {
		return err
	}
	if err := r.run(ctx, "after VACUUM ANALYZE", out); err != nil {
		return err
	}
	return purgeAll(ctx, q, out)
}

// purgeAll runs the events' retention (the worker's statements, in their bounded
// batches) over every event the bench wrote, as if all were past it, and prints
// how long it took and its slowest statement: each statement finds its oldest
// rows on a BRIN index, whose candidates it sorts, so a statement's cost could
// grow with the backlog.
func purgeAll(ctx context.Context, q *store.Queries, out io.Writer) error {
	before := time.Now().Add(time.Hour)
	for _, p := range []struct {
		name  string
		purge func(context.Context, time.Time) (int64, error)
	}{{"event rows", q.EventPurge}, {"event batches", q.EventBatchPurge}} {
		var n, calls int64
		var slowest time.Duration
		began := time.Now()
		for {
			t := time.Now()
			k, err := p.purge(ctx, before)
			if err != nil {
				return fmt.Errorf("retention of %s: %w", p.name, err)
			}
			slowest = max(slowest, time.Since(t))
			n, calls = n+k, calls+1
			if k == 0 {
				break
			}
		}
		secs := time.Since(began).Seconds()
		fmt.Fprintf(out, "retention of every %s: %d in %d statements, %.1fs (%.0f/s), slowest statement %.0f ms\n",
			p.name, n, calls, secs, float64(n)/secs, ms(slowest))
	}
	return nil
}

type eventsReaders struct {
	pool    *pgxpool.Pool
	svc     *event.Service
	account int64
	batches int64
	since   time.Time
}

func (r eventsReaders) run(ctx context.Context, stats string, out io.Writer) error {
	q := store.New(r.pool)
	fmt.Fprintf(out, "# %s (median ms of %d)\n", stats, eventsRepeat)
	var at []event.Position
	for _, off := range []int64{0, r.batches / 2, r.batches - r.batches/100 - 1} {
		p, err := q.BenchEventsAt(ctx, store.BenchEventsAtParams{AccountID: r.account, Off: int32(off)})
		if err != nil {
			return fmt.Errorf("position %d: %w", off, err)
		}
		at = append(at, event.Position{Xid: p.Xid, ID: p.FirstID})
	}
	at[0] = event.Position{}
	positions := []string{"start", "middle", "end"}
	// line prints one reader's figure at each position, one its figure alone.
	line := func(name string, f func(event.Position) (int, error)) error {
		fmt.Fprintf(out, "%-44s", name)
		for i, p := range at {
			d, got, err := medianOf(func() (int, error) { return f(p) })
			if err != nil {
				return fmt.Errorf("%s at the %s: %w", name, positions[i], err)
			}
			fmt.Fprintf(out, " %s=%.2f (%d)", positions[i], d, got)
		}
		fmt.Fprintln(out)
		return nil
	}
	one := func(name string, f func() (int, error)) error {
		d, got, err := medianOf(f)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(out, "%-44s %.2f (%d)\n", name, d, got)
		return nil
	}
	for _, types := range [][]string{nil, {event.SendFailed}, {event.SubscriberCreated}, {event.CampaignSent}} {
		if err := line(fmt.Sprintf("pull 100 types=%v", types), func(p event.Position) (int, error) {
			// A first read from p: a service of its own remembers no earlier one.
			evs, err := event.NewService(r.pool, event.Guard{}).Events(ctx, r.account, p, types, 100)
			return len(evs), err
		}); err != nil {
			return err
		}
	}
	// A stream of a type that never comes polls again from where its last read
	// passed over the rest (the first read from the start is the pull's above).
	rare := []string{event.CampaignSent}
	_, next, err := r.svc.StreamEvents(ctx, r.account, event.Authority{}, event.Position{}, rare, 500)
	if err != nil {
		return err
	}
	if err := one("stream types=[campaign.sent], the next poll", func() (int, error) {
		evs, _, err := r.svc.StreamEvents(ctx, r.account, event.Authority{}, next, rare, 500)
		return len(evs), err
	}); err != nil {
		return err
	}
	// A pull of the same, polled again from the same position: the service
	// remembers how far its last empty read passed over the rest.
	if _, err := r.svc.Events(ctx, r.account, event.Position{}, rare, 100); err != nil {
		return err
	}
	if err := one("pull types=[campaign.sent], the next poll", func() (int, error) {
		evs, err := r.svc.Events(ctx, r.account, event.Position{}, rare, 100)
		return len(evs), err
	}); err != nil {
		return err
	}
	for _, types := range [][]string{nil, {event.SendFailed}, {event.CampaignSent}} {
		if err := one(fmt.Sprintf("newest 50 types=%v", types), func() (int, error) {
			evs, err := r.svc.Newest(ctx, r.account, types, 50)
			return len(evs), err
		}); err != nil {
			return err
		}
	}
	if err := line("fan-out pick 1000", func(p event.Position) (int, error) {
		evs, err := q.EventFanoutPick(ctx, store.EventFanoutPickParams{AccountID: r.account,
			CursorXid: p.Xid, CursorID: p.ID, Lim: 1000})
		return len(evs), err
	}); err != nil {
		return err
	}
	// A delivery's events: the 100 ids past each position (read once, untimed),
	// asked for in reverse.
	delivery := map[event.Position][]int64{}
	for _, p := range at {
		evs, err := r.svc.Events(ctx, r.account, p, nil, 100)
		if err != nil {
			return err
		}
		for _, e := range slices.Backward(evs) {
			delivery[p] = append(delivery[p], e.Position.ID)
		}
	}
	if err := line("a delivery's 100 events by id", func(p event.Position) (int, error) {
		rows, err := q.EventGetMany(ctx, store.EventGetManyParams{AccountID: r.account, Ids: delivery[p]})
		return len(rows), err
	}); err != nil {
		return err
	}
	if err := one("endpoints behind (none)", func() (int, error) {
		ids, err := q.EventEndpointsBehind(ctx)
		return len(ids), err
	}); err != nil {
		return err
	}
	if err := one("rewind by time to the middle (no endpoint)", func() (int, error) {
		n, err := q.EventEndpointRewind(ctx, store.EventEndpointRewindParams{AccountID: r.account, Since: r.since, ID: 0})
		return int(n), err
	}); err != nil {
		return err
	}

	cw := &countingWriter{}
	w, err := export.NewWriter(export.NDJSON, cw, export.Columns[export.Events])
	if err != nil {
		return err
	}
	began := time.Now()
	rows, err := export.NewService(r.pool).Stream(ctx, export.Request{AccountID: r.account, Kind: export.Events}, w)
	if err != nil {
		return err
	}
	secs := time.Since(began).Seconds()
	fmt.Fprintf(out, "export ndjson: %d events, %.1f MB in %.2fs: %.0f events/s\n", rows, float64(cw.n)/1e6, secs, float64(rows)/secs)
	return nil
}

// medianOf runs f eventsRepeat times after one untimed run and returns the
// median milliseconds and what the last run returned.
func medianOf(f func() (int, error)) (float64, int, error) {
	got, err := f()
	if err != nil {
		return 0, 0, err
	}
	var d []float64
	for range eventsRepeat {
		began := time.Now()
		if got, err = f(); err != nil {
			return 0, 0, err
		}
		d = append(d, ms(time.Since(began)))
	}
	return median(d), got, nil
}
