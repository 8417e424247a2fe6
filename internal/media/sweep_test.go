package media_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/media"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestSweepRemovesOrphanedBytes: in a directory and in an S3 bucket, Sweep
// removes the bytes no image row names once they are over an hour old (an
// upload cut short between its bytes and its row, a purged account's), keeps
// younger ones (an upload may be about to commit its row) and every image's
// bytes however old; in a directory, stale temporary files of a Put cut short
// go too. PurgeAccount removes an account's unnamed bytes at once, and no other
// account's.
func TestSweepRemovesOrphanedBytes(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	fx := testfactory.New(pool)
	dir := t.TempDir()
	s3, fake := newFakeS3(t)
	old := time.Now().Add(-2 * time.Hour)
	stores := []struct {
		name     string
		store    media.Store
		backdate func(key string)
		keys     func() []string
	}{
		{"fs", media.NewDir(dir), func(key string) {
			require.NoError(t, os.Chtimes(filepath.Join(dir, filepath.FromSlash(key)), old, old))
		}, func() []string {
			var keys []string
			_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, _ error) error {
				if !d.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					keys = append(keys, filepath.ToSlash(rel))
				}
				return nil
			})
			sort.Strings(keys)
			return keys
		}},
		{"s3", s3, func(key string) {
			fake.mu.Lock()
			defer fake.mu.Unlock()
			fake.modified["media/"+key] = old
		}, func() []string {
			fake.mu.Lock()
			defer fake.mu.Unlock()
			var keys []string
			for k := range fake.objects {
				keys = append(keys, strings.TrimPrefix(k, "media/"))
			}
			sort.Strings(keys)
			return keys
		}},
	}
	for _, st := range stores {
		s := media.NewServiceIn(pool, st.store)
		a := fx.Account(t, "sweep-"+st.name)
		acct := strconv.FormatInt(a.ID, 10)
		m, _, err := s.Upload(ctx, a.ID, "kept.png", "image/png", encoded(t, "png", picture(40, 30)))
		require.NoError(t, err)
		keptImage, keptThumb := acct+"/"+m.SHA256+".png", acct+"/"+m.SHA256+".thumb.png"
		st.backdate(keptImage)
		st.backdate(keptThumb)

		put := func(key string, backdate bool) {
			require.NoError(t, st.store.Put(ctx, key, "image/png", []byte("orphan")))
			if backdate {
				st.backdate(key)
			}
		}
		orphanOld := acct + "/" + strings.Repeat("a", 64) + ".png"
		orphanYoung := acct + "/" + strings.Repeat("b", 64) + ".png"
		purged := "999999999/" + strings.Repeat("c", 64) + ".thumb.jpg" // no such account
		put(orphanOld, true)
		put(orphanYoung, false)
		put(purged, true)
		want := []string{keptImage, keptThumb, orphanYoung}
		if st.name == "fs" {
			stale, fresh := filepath.Join(dir, acct, ".upload-123"), filepath.Join(dir, acct, ".upload-456")
			require.NoError(t, os.WriteFile(stale, []byte("x"), 0o600))
			require.NoError(t, os.WriteFile(fresh, []byte("x"), 0o600))
			require.NoError(t, os.Chtimes(stale, old, old))
			want = append(want, acct+"/.upload-456")
		}
		sort.Strings(want)

		n, err := s.Sweep(ctx, time.Hour)
		require.NoError(t, err, st.name)
		removed := 2 // the old orphan and the purged account's
		if st.name == "fs" {
			removed++ // the stale temporary file
		}
		require.Equal(t, removed, n, st.name)
		require.Equal(t, want, st.keys(), st.name)
		_, body, err := s.Public(ctx, a.PublicID, m.SHA256+".png")
		require.NoError(t, err, "the image is served as before")
		require.NotEmpty(t, body)

		// PurgeAccount: every unnamed key of the account goes, young or old;
		// another account's bytes stay.
		other := fx.Account(t, "other-"+st.name)
		om, _, err := s.Upload(ctx, other.ID, "theirs.png", "image/png", encoded(t, "png", picture(20, 20)))
		require.NoError(t, err)
		require.NoError(t, s.Delete(ctx, a.ID, m.ID, a.PublicID))
		put(keptImage, false) // bytes the delete's removal missed
		n, err = s.PurgeAccount(ctx, a.ID)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, 2, st.name)
		for _, k := range st.keys() {
			require.False(t, strings.HasPrefix(k, acct+"/") && !strings.Contains(k, ".upload-"), "%s: %s left", st.name, k)
		}
		_, _, err = s.Public(ctx, other.PublicID, om.SHA256+".png")
		require.NoError(t, err, "another account's image is untouched")
	}
}

// TestDeleteKeepsWhatAMessageShows: an image a stored transactional message
// names (its web view renders it while retention keeps it; a queued one has yet
// to send it) is not deleted: 409 naming the message; once the message is gone
// the image can be deleted.
func TestDeleteKeepsWhatAMessageShows(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	s := media.NewService(pool)
	a := testfactory.New(pool).Account(t, "a")
	m, _, err := s.Upload(ctx, a.ID, "logo.png", "image/png", encoded(t, "png", picture(20, 20)))
	require.NoError(t, err)
	var msg int64
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO messages (account_id, idempotency_key, request_hash, category, to_email, from_email, subject, html)
		VALUES ($1, 'k1', sha256('x'), 'transactional', 'to@example.com', 'a@example.com', 'Receipt', $2) RETURNING id`,
		a.ID, `<p><img src="https://mail.example.com`+m.Path(a.PublicID)+`" alt="logo"> <a href="{{.WebViewURL}}">View</a></p>`).Scan(&msg))

	err = s.Delete(ctx, a.ID, m.ID, a.PublicID)
	require.Equal(t, apperr.Conflict, apperr.CodeOf(err))
	var e *apperr.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, []int64{msg}, e.Extra["message_ids"])
	require.Equal(t, []int64{}, e.Extra["campaign_ids"])
	_, err = s.Get(ctx, a.ID, m.ID)
	require.NoError(t, err, "still there")

	_, err = pool.Exec(ctx, `DELETE FROM messages WHERE id = $1`, msg) // retention
	require.NoError(t, err)
	require.NoError(t, s.Delete(ctx, a.ID, m.ID, a.PublicID))
}
