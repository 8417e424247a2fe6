package startstop_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/startstop"
)

// fake is a Service that records its starts and stops.
type fake struct {
	startErr      error
	starts, stops atomic.Int32
	// onStop, when set, runs inside Stop.
	onStop func(ctx context.Context) error
}

func (f *fake) Start(context.Context) error {
	f.starts.Add(1)
	return f.startErr
}

func (f *fake) Stop(ctx context.Context) error {
	f.stops.Add(1)
	if f.onStop != nil {
		return f.onStop(ctx)
	}
	return nil
}

func TestRunnerStopsTheStartedWhenOneFailsToStart(t *testing.T) {
	t.Parallel()
	a, b := &fake{}, &fake{}
	bad := &fake{startErr: errors.New("no database")}
	never := &fake{}
	var r startstop.Runner
	err := r.Start(context.Background(), a, b, bad, never)
	require.ErrorIs(t, err, bad.startErr)
	for name, s := range map[string]*fake{"a": a, "b": b} {
		require.EqualValues(t, 1, s.starts.Load(), name)
		require.EqualValues(t, 1, s.stops.Load(), "%s was started, so it is stopped", name)
	}
	require.Zero(t, bad.stops.Load(), "the one that failed left nothing running")
	require.Zero(t, never.starts.Load(), "nothing after the failure starts")

	require.NoError(t, r.Stop(context.Background()), "a Stop after the failed Start does nothing")
	require.EqualValues(t, 1, a.stops.Load())
}

func TestRunnerStopsInParallelAndOnce(t *testing.T) {
	t.Parallel()
	// Each one's Stop returns only once the other's has begun: stopped one after
	// the other, they would wait for each other until the deadline.
	aStopping, bStopping := make(chan struct{}), make(chan struct{})
	wait := func(ctx context.Context, begun chan struct{}, other <-chan struct{}) error {
		close(begun)
		select {
		case <-other:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	a := &fake{}
	b := &fake{}
	a.onStop = func(ctx context.Context) error { return wait(ctx, aStopping, bStopping) }
	b.onStop = func(ctx context.Context) error { return wait(ctx, bStopping, aStopping) }
	var r startstop.Runner
	require.NoError(t, r.Start(context.Background(), a, b))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.Stop(ctx))
	require.NoError(t, r.Stop(ctx), "a second Stop does nothing")
	require.EqualValues(t, 1, a.stops.Load())
	require.EqualValues(t, 1, b.stops.Load())
}

func TestLoopLifecycle(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	running := make(chan struct{}, 2)
	var finished []string
	l := startstop.NewLoop(func(ctx context.Context) {
		runs.Add(1)
		running <- struct{}{}
		<-ctx.Done()
		finished = append(finished, "loop")
	}).Finally(func(context.Context) error {
		finished = append(finished, "finally")
		return nil
	})
	require.NoError(t, l.Stop(context.Background()), "a Stop before Start does nothing")

	startCtx, cancelStart := context.WithCancel(context.Background())
	require.NoError(t, l.Start(startCtx))
	require.NoError(t, l.Start(startCtx), "a second Start does nothing")
	<-running
	cancelStart()
	// Only Stop ends the loop: the start context's end (a signal) does not.
	select {
	case <-running:
		t.Fatal("the loop ran twice")
	default:
	}
	require.Empty(t, finished)

	require.NoError(t, l.Stop(context.Background()))
	require.Equal(t, []string{"loop", "finally"}, finished, "the final work runs after the loop has returned")
	require.NoError(t, l.Stop(context.Background()), "a second Stop does nothing")
	require.Equal(t, []string{"loop", "finally"}, finished)
	require.EqualValues(t, 1, runs.Load())
}

func TestLoopStopGivesUpAtTheDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	l := startstop.NewLoop(func(context.Context) { <-release })
	require.NoError(t, l.Start(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, l.Stop(ctx), context.Canceled, "a loop that does not end in time is reported")
	close(release)
}
