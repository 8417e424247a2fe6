package httpapi

import (
	"strconv"
	"sync"

	"github.com/sendonce/sendonce/internal/event"
)

// streamWatch wakes the open event streams of an API key or a dashboard session
// when the process hears (postgres.AuthorityChannel) that the key was revoked or
// the session signed out. A woken stream checks its authority again and ends once
// it no longer holds; being woken decides nothing by itself, so a spurious or
// repeated wake-up costs one check.
type streamWatch struct {
	mu     sync.Mutex
	byName map[string]map[chan struct{}]struct{}
}

// names are the notification payloads that concern a stream opened under a.
func names(a event.Authority) []string {
	var out []string
	if a.KeyID != 0 {
		out = append(out, "key:"+strconv.FormatInt(a.KeyID, 10))
	}
	if a.SessionID != 0 {
		out = append(out, "session:"+strconv.FormatInt(a.SessionID, 10))
	}
	return out
}

// watch registers a stream opened under a and returns its wake-up channel and the
// function that unregisters it. The channel starts signalled: a revocation heard
// between the stream's authentication and this registration is then not missed,
// at the cost of one check per stream opened. A stream under neither key nor
// session is registered too, for wakeAll.
func (w *streamWatch) watch(a event.Authority) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	c <- struct{}{}
	ns := append(names(a), "")
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byName == nil {
		w.byName = map[string]map[chan struct{}]struct{}{}
	}
	for _, n := range ns {
		if w.byName[n] == nil {
			w.byName[n] = map[chan struct{}]struct{}{}
		}
		w.byName[n][c] = struct{}{}
	}
	return c, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, n := range ns {
			delete(w.byName[n], c)
			if len(w.byName[n]) == 0 {
				delete(w.byName, n)
			}
		}
	}
}

// ended wakes the streams of the key or session a notification names
// ("key:<id>", "session:<id>").
func (w *streamWatch) ended(payload string) {
	if payload == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.byName[payload] {
		wake(c)
	}
}

// wakeAll wakes every stream: after the LISTEN connection (re)connects, since a
// notification sent while it was down is lost.
func (w *streamWatch) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.byName[""] {
		wake(c)
	}
}

// wake signals c without blocking: one pending wake-up is as good as many.
func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
