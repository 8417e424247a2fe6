package campaign

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/sendonce/sendonce/internal/testsignal"
)

// StatsTTL is how old the cached counts of GET /v1/campaigns/{id}/stats may be.
// Counting a large campaign's sends costs tens of milliseconds of CPU, and
// dashboards poll it; a second of staleness is invisible to them, while
// recounting on every request lets a few pollers saturate the database.
const StatsTTL = time.Second

// statsCacheMax bounds the cache; past it, expired entries are dropped, and if
// none are, the whole map is reset (entries live a second, so that costs little).
const statsCacheMax = 4096

type statsKey struct{ accountID, campaignID int64 }

// statsCounts is one count of a campaign's sends, with the campaign's status read
// in the same statement (one snapshot).
type statsCounts struct {
	counts map[string]int64
	status string
}

type statsEntry struct {
	statsCounts
	at time.Time
	// refreshing is set while a background recount of this entry runs.
	refreshing bool
}

// statsCache holds recent send counts per (account, campaign). Only the counts
// are cached: the campaign row (status, timestamps, and whether it exists for this
// account at all) is still read on every request, by primary key. The key carries the
// account, so one tenant never sees another's entry, and a miss runs the
// account-scoped query as before.
//
// An entry serves only callers that saw the campaign in the status its counts were
// taken with. Any transition, made by this process or by an executor elsewhere,
// therefore makes the next request recount; in particular a final status (sent,
// cancelled) always comes with counts taken after the campaign reached it, never
// with the queued and sending rows of a second before.
type statsCache struct {
	now     func() time.Time
	ttl     time.Duration
	mu      sync.Mutex
	entries map[statsKey]statsEntry
	// group makes concurrent misses for one campaign and status share a single count.
	group singleflight.Group
	// refreshed: a background recount ended, stored or failed; the campaign's id
	// (tests wait on it rather than poll; production never initialises it).
	refreshed testsignal.Signal[int64]
}

func newStatsCache(now func() time.Time, ttl time.Duration) *statsCache {
	if now == nil {
		now = time.Now
	}
	return &statsCache{now: now, ttl: ttl, entries: map[statsKey]statsEntry{}}
}

// get returns the counts for k of a campaign the caller saw in status: the cached
// ones if younger than the TTL and taken in that status, else loads them with load
// (once for all concurrent callers) and caches the result. Errors are not cached.
// Once an entry is half the TTL old, the first request to see it starts one
// recount in the background and still gets the cached counts, so under steady
// polling nobody waits for a count and every answer is younger than the TTL.
func (c *statsCache) get(ctx context.Context, k statsKey, status string, load func(context.Context) (statsCounts, error)) (map[string]int64, error) {
	if m, refresh, ok := c.lookup(k, status); ok {
		if refresh {
			go func() {
				bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
				defer cancel()
				if _, err := c.load(bg, k, status, load); err != nil {
					c.refreshFailed(k)
				}
				c.refreshed.Signal(k.campaignID)
			}()
		}
		return m, nil
	}
	return c.load(ctx, k, status, load)
}

// load counts k's sends once for all concurrent callers that saw the campaign in
// status, and caches the result. Callers that saw another status never share the
// count: one that saw a final status must not get a count begun before it.
func (c *statsCache) load(ctx context.Context, k statsKey, status string, load func(context.Context) (statsCounts, error)) (map[string]int64, error) {
	sfKey := strconv.FormatInt(k.accountID, 10) + "/" + strconv.FormatInt(k.campaignID, 10) + "/" + status
	v, err, _ := c.group.Do(sfKey, func() (any, error) {
		// Another caller may have just filled the entry while this one waited.
		if m, ok := c.recent(k, status); ok {
			return m, nil
		}
		// The clock is read before the count, so the entry's age never
		// understates how old the counts are.
		at := c.now()
		n, err := load(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		c.store(k, statsEntry{statsCounts: n, at: at})
		return n.counts, nil
	})
	if err != nil {
		return nil, err
	}
	return maps.Clone(v.(map[string]int64)), nil
}

// lookup returns a copy of k's counts if they were taken in status and are younger
// than the TTL (the copy keeps a caller that edits its map from changing what others
// get), and whether this caller should start the background recount.
func (c *statsCache) lookup(k statsKey, status string) (counts map[string]int64, refresh, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	age := c.now().Sub(e.at)
	if !ok || e.status != status || age >= c.ttl {
		return nil, false, false
	}
	if age >= c.ttl/2 && !e.refreshing {
		e.refreshing = true
		c.entries[k] = e
		refresh = true
	}
	return maps.Clone(e.counts), refresh, true
}

// recent returns k's counts if they were taken in status and are younger than half
// the TTL: fresh enough that a recount just made by another caller need not be repeated.
func (c *statsCache) recent(k statsKey, status string) (map[string]int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || e.status != status || c.now().Sub(e.at) >= c.ttl/2 {
		return nil, false
	}
	return maps.Clone(e.counts), true
}

// refreshFailed lets a later request try the background recount again.
func (c *statsCache) refreshFailed(k statsKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		e.refreshing = false
		c.entries[k] = e
	}
}

// store caches e for k, unless the entry there is newer (a slow count finishing
// after a faster, later one).
func (c *statsCache) store(k statsKey, e statsEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[k]; ok && old.at.After(e.at) {
		return
	}
	if len(c.entries) >= statsCacheMax {
		now := c.now()
		for key, old := range c.entries {
			if now.Sub(old.at) >= c.ttl {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= statsCacheMax {
			c.entries = map[statsKey]statsEntry{}
		}
	}
	c.entries[k] = e
}
