package attachment

import (
	"container/list"
	"sync"

	"github.com/sendonce/sendonce/internal/provider"
)

// DefaultCacheBytes is the encodings an EncodedCache holds at most by default.
const DefaultCacheBytes = 64 << 20

// EncodedCache holds the base64 encoding of campaigns' files, so that a file is
// encoded once per campaign rather than once per recipient (a 1 MB file is
// 1.37 MB of base64 to make for each message otherwise). Entries are keyed by
// campaign and the file's SHA-256, their encoded bytes count against a cap, and
// the least recently used go first when a new one would pass it; Forget drops a
// campaign's when it finishes. A file larger than the whole cap is not cached:
// its messages encode it as before. Safe for concurrent use.
type EncodedCache struct {
	max int

	mu      sync.Mutex
	used    int
	lru     *list.List // of *cacheEntry, most recent first
	entries map[cacheKey]*list.Element
}

type cacheKey struct {
	campaign int64
	sum      [32]byte
}

type cacheEntry struct {
	key cacheKey
	enc *provider.Encoded
}

// NewEncodedCache returns a cache holding at most maxBytes of encodings (0 means
// DefaultCacheBytes, negative means none).
func NewEncodedCache(maxBytes int) *EncodedCache {
	if maxBytes == 0 {
		maxBytes = DefaultCacheBytes
	}
	return &EncodedCache{max: maxBytes, lru: list.New(), entries: map[cacheKey]*list.Element{}}
}

// Attach returns files with their shared encodings set, encoding (and caching)
// those not held yet. files is not modified: when no file gets an encoding it is
// returned as is. A file without a SHA-256 is left to encode per message.
func (c *EncodedCache) Attach(campaignID int64, files []provider.Attachment) []provider.Attachment {
	if c == nil || c.max < 0 || len(files) == 0 {
		return files
	}
	var out []provider.Attachment
	for i, f := range files {
		if len(f.SHA256) != 32 || f.Encoded != nil {
			continue
		}
		enc := c.get(campaignID, f)
		if enc == nil {
			continue
		}
		if out == nil {
			out = append(make([]provider.Attachment, 0, len(files)), files...)
		}
		out[i].Encoded = enc
	}
	if out == nil {
		return files
	}
	return out
}

// get returns the encoding of f for the campaign, making it on a miss; nil when
// it cannot be held.
func (c *EncodedCache) get(campaignID int64, f provider.Attachment) *provider.Encoded {
	k := cacheKey{campaign: campaignID, sum: [32]byte(f.SHA256)}
	c.mu.Lock()
	if el, ok := c.entries[k]; ok {
		c.lru.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*cacheEntry).enc
	}
	c.mu.Unlock()
	// Encoded outside the lock: two workers missing together both encode, once.
	enc := provider.EncodeAttachment(f.Content)
	if enc.Size() > c.max {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		return el.Value.(*cacheEntry).enc
	}
	for c.used+enc.Size() > c.max {
		c.remove(c.lru.Back())
	}
	c.entries[k] = c.lru.PushFront(&cacheEntry{key: k, enc: enc})
	c.used += enc.Size()
	return enc
}

func (c *EncodedCache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.used -= e.enc.Size()
}

// Forget drops the campaign's encodings (it finished: no message will need them).
func (c *EncodedCache) Forget(campaignID int64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.lru.Front(); el != nil; {
		next := el.Next()
		if el.Value.(*cacheEntry).key.campaign == campaignID {
			c.remove(el)
		}
		el = next
	}
}

// Len is the number of encodings held.
func (c *EncodedCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Bytes is the encodings' size in all.
func (c *EncodedCache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
