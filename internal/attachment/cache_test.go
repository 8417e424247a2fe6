package attachment_test

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/attachment"
	"github.com/sendonce/sendonce/internal/provider"
)

func file(name string, size int, fill byte) provider.Attachment {
	c := bytes.Repeat([]byte{fill}, size)
	sum := sha256.Sum256(c)
	return provider.Attachment{Filename: name, ContentType: "application/pdf", Content: c, SHA256: sum[:]}
}

// A campaign's file is encoded once: every message gets the same encoding; the
// campaign's list is never modified; another campaign has its own entry.
func TestEncodedCacheEncodesOncePerCampaign(t *testing.T) {
	t.Parallel()
	c := attachment.NewEncodedCache(10 << 20)
	files := []provider.Attachment{file("a.pdf", 1000, 'a'), file("b.pdf", 2000, 'b')}
	first := c.Attach(7, files)
	require.NotNil(t, first[0].Encoded)
	require.NotNil(t, first[1].Encoded)
	require.Nil(t, files[0].Encoded, "the shared list is not modified")
	second := c.Attach(7, files)
	require.Same(t, first[0].Encoded, second[0].Encoded, "encoded once")
	require.Same(t, first[1].Encoded, second[1].Encoded)
	require.Equal(t, 2, c.Len())
	other := c.Attach(8, files)
	require.NotSame(t, first[0].Encoded, other[0].Encoded, "keyed by campaign too")
	require.Equal(t, 4, c.Len())

	// The campaign finished: its encodings go, the other campaign's stay.
	c.Forget(7)
	require.Equal(t, 2, c.Len())
	require.Same(t, other[0].Encoded, c.Attach(8, files)[0].Encoded)

	// A file without a known SHA-256 is left to encode per message.
	noSum := []provider.Attachment{{Filename: "x", Content: []byte("x")}}
	require.Nil(t, c.Attach(9, noSum)[0].Encoded)
	var nilCache *attachment.EncodedCache
	require.Equal(t, files, nilCache.Attach(1, files))
}

// The cache holds at most its cap of encoded bytes, evicting the least recently
// used; a file larger than the cap is never held (its messages encode it).
func TestEncodedCacheCapAndLRU(t *testing.T) {
	t.Parallel()
	// 57 bytes encode to one 78-byte line: 10 such files are 780 bytes.
	c := attachment.NewEncodedCache(3 * 78)
	f := func(fill byte) []provider.Attachment { return []provider.Attachment{file("f", 57, fill)} }
	a := c.Attach(1, f('a'))[0].Encoded
	c.Attach(1, f('b'))
	c.Attach(1, f('c'))
	require.Equal(t, 3*78, c.Bytes())
	require.Same(t, a, c.Attach(1, f('a'))[0].Encoded, "a is now the most recent")
	c.Attach(1, f('d')) // evicts b, the least recent
	require.Equal(t, 3, c.Len())
	require.LessOrEqual(t, c.Bytes(), 3*78)
	require.Same(t, a, c.Attach(1, f('a'))[0].Encoded, "a stayed")
	b2 := c.Attach(1, f('b'))[0].Encoded
	require.NotNil(t, b2, "b encoded again after its eviction")

	big := c.Attach(2, []provider.Attachment{file("big", 1000, 'z')})
	require.Nil(t, big[0].Encoded, "larger than the cap")
	require.LessOrEqual(t, c.Bytes(), 3*78)

	off := attachment.NewEncodedCache(-1)
	require.Nil(t, off.Attach(1, f('a'))[0].Encoded, "cache off")
}
