package attachment_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/attachment"
)

func enc(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }

// The 10 MB limit counts decoded bytes of all files together: exactly the limit
// passes, one byte more is too large (413) naming the list.
func TestCheckTotalLimit(t *testing.T) {
	t.Parallel()
	half := attachment.MaxTotalBytes / 2
	_, err := attachment.Check([]attachment.Input{{Filename: "a", Content: enc(half)}, {Filename: "b", Content: enc(half)}}, "/attachments")
	require.NoError(t, err)
	_, err = attachment.Check([]attachment.Input{{Filename: "a", Content: enc(half)}, {Filename: "b", Content: enc(half + 1)}}, "/attachments")
	e, ok := err.(*apperr.Error)
	require.True(t, ok, "%v", err)
	require.Equal(t, apperr.TooLarge, e.Code)
	require.Equal(t, "/attachments", e.Fields[0].Pointer)
}

// A content type left out is guessed from the extension; a given one keeps its
// parameters but never a name (the provider writes the file's own).
func TestCheckContentType(t *testing.T) {
	t.Parallel()
	files, err := attachment.Check([]attachment.Input{
		{Filename: "Report.PDF", Content: enc(1)},
		{Filename: "noext", Content: enc(1)},
		{Filename: "a.txt", Content: enc(1), ContentType: `text/plain; charset=utf-8; name="evil.exe"`},
	}, "/attachments")
	require.NoError(t, err)
	require.Equal(t, "application/pdf", files[0].ContentType)
	require.Equal(t, "application/octet-stream", files[1].ContentType)
	require.Equal(t, "text/plain; charset=utf-8", files[2].ContentType)
	require.Equal(t, make([]byte, 1), files[0].Content)
}

// Names in every script pass; what could mislead a reader or a file system does not.
func TestCheckFilenames(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"Überweisung März.pdf", "請求書.pdf", "a b (1).txt", ".profile", strings.Repeat("a", 255)} {
		_, err := attachment.Check([]attachment.Input{{Filename: ok, Content: enc(1)}}, "/attachments")
		require.NoError(t, err, "%q", ok)
	}
	for _, bad := range []string{"", "a/b", `a\b`, "..", ".", "   ", "a\tb", "a\x7fb", "a\u0085b", "a\u2028b", "a\u202eb", "a\u2066b", "a\u200eb", "a\u061cb",
		"\ufeffa", strings.Repeat("a", 256), "a\xffb"} {
		_, err := attachment.Check([]attachment.Input{{Filename: bad, Content: enc(1)}}, "/attachments")
		require.Error(t, err, "%q", bad)
		require.Equal(t, "/attachments/0/filename", err.(*apperr.Error).Fields[0].Pointer, "%q", bad)
	}
}
