package client

import (
	"testing"
	"time"
)

func TestWait(t *testing.T) {
	for attempt, want := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond} {
		for range 50 {
			if got := wait(attempt, 30*time.Second); got < want/2 || got > want {
				t.Fatalf("wait(%d) = %v, want within [%v, %v]", attempt, got, want/2, want)
			}
		}
	}
	if got := wait(30, 3*time.Second); got < 1500*time.Millisecond || got > 3*time.Second {
		t.Fatalf("wait(30) under a 3 s cap = %v", got)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"0": 0, "7": 7 * time.Second, " 120 ": 2 * time.Minute, "99999999999999999999999": maxRetryAfter,
		"Tue, 01 Jan 2030 00:00:30 GMT": 30 * time.Second, "Mon, 31 Dec 2029 23:00:00 GMT": 0,
	} {
		if got, ok := retryAfter(v, now); !ok || got != want {
			t.Errorf("retryAfter(%q) = %v, %v; want %v", v, got, ok, want)
		}
	}
	for _, v := range []string{"", "-1", "1.5", "soon"} {
		if _, ok := retryAfter(v, now); ok {
			t.Errorf("retryAfter(%q) accepted", v)
		}
	}
}
