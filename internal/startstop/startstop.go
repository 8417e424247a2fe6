// Package startstop is the one lifecycle of the process's background services
// (the executor, event delivery, the tracking flusher, the complaint guard, the
// opt-in purge, the LISTEN connection): each is a Service, and one Runner starts
// them in order and stops them together.
package startstop

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Service is a background service. Start begins its work and returns once it
// runs; an error means it did not start and left nothing running. Stop ends the
// work and returns once it has ended, or when ctx ends (ctx's deadline is the
// time it has to finish what it holds). A Stop without a Start, or a second Stop,
// does nothing.
type Service interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Loop is the Service of a function that works until its context ends, the
// shape of every loop here (event.Worker.Run, tracking.Service.Run, …).
type Loop struct {
	run func(ctx context.Context)
	// finish, when set, runs once the loop has returned: the work a stop must
	// still do (writing what the loop held).
	finish func(ctx context.Context) error

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	err    error
}

// NewLoop returns the Service running run in a goroutine of its own.
func NewLoop(run func(ctx context.Context)) *Loop { return &Loop{run: run} }

// Finally sets the work Stop does after the loop has returned; it returns l.
func (l *Loop) Finally(finish func(ctx context.Context) error) *Loop {
	l.finish = finish
	return l
}

// Start runs the loop on a context only Stop ends: a cancelled start context
// (a signal) does not cut it short, the Runner's Stop does. A second Start does
// nothing.
func (l *Loop) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return nil
	}
	ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.done = make(chan struct{})
	go func() {
		defer close(l.done)
		l.run(ctx)
	}()
	return nil
}

// Stop ends the loop, waits for it (at most until ctx ends), then finishes.
func (l *Loop) Stop(ctx context.Context) error {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if done == nil {
		return nil
	}
	l.once.Do(func() {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			l.err = ctx.Err()
			return
		}
		if l.finish != nil {
			l.err = l.finish(ctx)
		}
	})
	return l.err
}

// Runner owns the background services of a process.
type Runner struct {
	// StopTimeout bounds the stop of the services already started when a later
	// one fails to start; 0 means no bound.
	StopTimeout time.Duration

	mu      sync.Mutex
	started []Service
}

// Start starts services in order. When one fails, it stops those it started (all
// of them at once) and returns that service's error.
func (r *Runner) Start(ctx context.Context, services ...Service) error {
	for _, s := range services {
		if err := s.Start(ctx); err != nil {
			stopCtx := context.WithoutCancel(ctx)
			if r.StopTimeout > 0 {
				var cancel context.CancelFunc
				stopCtx, cancel = context.WithTimeout(stopCtx, r.StopTimeout)
				defer cancel()
			}
			return errors.Join(err, r.Stop(stopCtx))
		}
		r.mu.Lock()
		r.started = append(r.started, s)
		r.mu.Unlock()
	}
	return nil
}

// Stop stops every service started so far, all at once, and returns when all have
// stopped (or ctx has ended), with their errors. A second Stop does nothing.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	started := r.started
	r.started = nil
	r.mu.Unlock()
	errs := make([]error, len(started))
	var wg sync.WaitGroup
	for i, s := range started {
		wg.Go(func() { errs[i] = s.Stop(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
