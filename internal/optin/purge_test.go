package optin_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/optin"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/transactional"
	"github.com/sendonce/sendonce/internal/unsubscribe"
)

// The purge removes sign-ups left pending past the cut-off, and pending
// memberships that old, in batches larger than one statement's; it never touches
// confirmed subscribers, a tenant's own pending subscribers, younger sign-ups or
// settled memberships, and two purges at once delete each row once.
func TestPurgePendingSignups(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	fx := testfactory.New(pool)
	acct := fx.Account(t, "a").ID
	list := fx.List(t, acct, "l")
	old := time.Now().Add(-40 * 24 * time.Hour)
	n := optin.PurgeBatch + 250
	// Old unconfirmed sign-ups, each with a pending membership: purged.
	fx.BulkSubscribers(t, acct, testfactory.Bulk{Prefix: "old", N: n, Statuses: []string{"pending"}, Signup: true,
		CreatedAt: &old})
	require.Equal(t, int64(n), fx.Memberships(t, acct, list, testfactory.Membership{Prefix: "old", Status: "pending",
		StatusAt: &old}))
	// Kept: a young sign-up, a confirmed sign-up, the tenant's own old pending
	// subscriber; an old pending membership of a confirmed subscriber goes, its
	// subscribed membership stays.
	fx.Subscriber(t, acct, testfactory.Subscriber{Email: "young@example.com", Status: "pending", Signup: true})
	fx.Subscriber(t, acct, testfactory.Subscriber{Email: "conf@example.com", Status: "confirmed", Signup: true,
		CreatedAt: &old})
	fx.Subscriber(t, acct, testfactory.Subscriber{Email: "api@example.com", Status: "pending", CreatedAt: &old})
	list2 := fx.List(t, acct, "l2")
	require.Equal(t, int64(1), fx.Memberships(t, acct, list, testfactory.Membership{Prefix: "conf@", Status: "pending",
		StatusAt: &old}))
	require.Equal(t, int64(1), fx.Memberships(t, acct, list2, testfactory.Membership{Prefix: "conf@",
		Status: "subscribed", StatusAt: &old}))

	svc := optin.NewService(pool, transactional.NewService(pool, nil), mustRing(t), optin.Options{})
	before := time.Now().Add(-30 * 24 * time.Hour)
	// Each goroutine sends its result, error included, and the test goroutine
	// asserts: a failed require in a goroutine would end it without sending, and
	// the test would hang on the receive.
	type result struct {
		subs, members int64
		err           error
	}
	done := make(chan result, 2)
	for range 2 {
		go func() {
			s, m, err := svc.Purge(ctx, before)
			done <- result{s, m, err}
		}()
	}
	a, b := <-done, <-done
	require.NoError(t, a.err)
	require.NoError(t, b.err)
	require.Equal(t, int64(n), a.subs+b.subs)
	// The membership purge of one may take memberships of sign-ups the other is
	// about to delete (both old and pending): the count is at least the one kept
	// subscriber's, and the end state below is exact.
	require.GreaterOrEqual(t, a.members+b.members, int64(1))

	var left []string
	rows, err := pool.Query(ctx, `SELECT email_lower FROM subscribers ORDER BY email_lower`)
	require.NoError(t, err)
	for rows.Next() {
		var e string
		require.NoError(t, rows.Scan(&e))
		left = append(left, e)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"api@example.com", "conf@example.com", "young@example.com"}, left)
	var members int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM list_members`).Scan(&members))
	require.Equal(t, 1, members, "the confirmed subscriber's subscribed membership stays")
	s, m, err := svc.Purge(ctx, before)
	require.NoError(t, err)
	require.Zero(t, s+m, "a second purge finds nothing")
}

func mustRing(t testing.TB) *token.Ring {
	t.Helper()
	s, err := token.NewRing([]string{"k1:optin-test-secret-0123456789"})
	require.NoError(t, err)
	return s
}

// Seal and Open: a token of one purpose never opens as another's or as an
// unsubscribe token, and rotation keeps old tokens open.
func TestSealPurposes(t *testing.T) {
	t.Parallel()
	s := mustRing(t)
	tok := s.Seal("optin-confirm", []byte{1, 2, 3})
	p, err := s.Open("optin-confirm", tok)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 3}, p)
	_, err = s.Open("other", tok)
	require.ErrorIs(t, err, token.ErrInvalidToken)
	_, err = unsubscribe.NewSigner(s).Verify(tok)
	require.ErrorIs(t, err, unsubscribe.ErrInvalidToken, "an opt-in token is no unsubscribe link")
	_, err = s.Open("optin-confirm", unsubscribe.NewSigner(s).Token(1, 2, 3))
	require.ErrorIs(t, err, token.ErrInvalidToken, "an unsubscribe link is no opt-in token")
	rotated, err := token.NewRing([]string{"k2:another-secret-0123456789", "k1:optin-test-secret-0123456789"})
	require.NoError(t, err)
	p, err = rotated.Open("optin-confirm", tok)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 3}, p)
}
