package operator_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/media"
	"github.com/sendonce/sendonce/internal/operator"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestPurgeRemovesMediaFiles: purging a deleted account removes its images'
// bytes from the media store (a directory), not only its rows; another
// account's images stay, served as before.
func TestPurgeRemovesMediaFiles(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	fx := testfactory.New(pool)
	dir := t.TempDir()
	library := media.NewServiceIn(pool, media.NewDir(dir))
	gone, kept := fx.Account(t, "gone"), fx.Account(t, "kept")
	upload := func(acct int64, w int) media.Media {
		var b bytes.Buffer
		require.NoError(t, png.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, 10))))
		m, _, err := library.Upload(ctx, acct, "i.png", "image/png", b.Bytes())
		require.NoError(t, err)
		return m
	}
	upload(gone.ID, 10)
	upload(gone.ID, 11)
	theirs := upload(kept.ID, 12)
	files := func(acct int64) int {
		entries, err := os.ReadDir(filepath.Join(dir, strconv.FormatInt(acct, 10)))
		if os.IsNotExist(err) {
			return 0
		}
		require.NoError(t, err)
		return len(entries)
	}
	require.Equal(t, 4, files(gone.ID), "two images and their thumbnails")

	require.NoError(t, operator.NewService(pool, account.NewService(pool)).Delete(ctx, gone.ID))
	p := operator.Purger{Pool: pool, Accounts: account.NewService(pool), Media: library, Batch: 100,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	id, err := p.PurgeOne(ctx)
	require.NoError(t, err)
	require.Equal(t, gone.ID, id)
	require.Zero(t, files(gone.ID), "the purged account's bytes are gone from the store")
	require.Equal(t, 2, files(kept.ID))
	_, body, err := library.Public(ctx, kept.PublicID, theirs.SHA256+".png")
	require.NoError(t, err)
	require.NotEmpty(t, body)
}
