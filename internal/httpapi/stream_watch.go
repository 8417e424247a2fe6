package httpapi

import (
	"strconv"
	"sync"
)

// streamWatch wakes the open event streams of an API key when the process hears
// (postgres.KeyChannel) that the key was revoked. A woken stream checks its
// authority again and ends once it no longer holds; being woken decides nothing by
// itself, so a spurious or repeated wake-up costs one check.
type streamWatch struct {
	mu    sync.Mutex
	byKey map[int64]map[chan struct{}]struct{}
}

// watch registers a stream opened under key (0: under none) and returns its
// wake-up channel and the function that unregisters it. The channel starts
// signalled: a revocation heard between the stream's authentication and this
// registration is then not missed, at the cost of one check per stream opened.
func (w *streamWatch) watch(key int64) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	c <- struct{}{}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byKey == nil {
		w.byKey = map[int64]map[chan struct{}]struct{}{}
	}
	if w.byKey[key] == nil {
		w.byKey[key] = map[chan struct{}]struct{}{}
	}
	w.byKey[key][c] = struct{}{}
	return c, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.byKey[key], c)
		if len(w.byKey[key]) == 0 {
			delete(w.byKey, key)
		}
	}
}

// revoked wakes the streams of the key a notification names.
func (w *streamWatch) revoked(payload string) {
	key, err := strconv.ParseInt(payload, 10, 64)
	if err != nil || key <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for c := range w.byKey[key] {
		wake(c)
	}
}

// wakeAll wakes every stream: after the LISTEN connection (re)connects, since a
// revocation notified while it was down is lost.
func (w *streamWatch) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, cs := range w.byKey {
		for c := range cs {
			wake(c)
		}
	}
}

// wake signals c without blocking: one pending wake-up is as good as many.
func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
