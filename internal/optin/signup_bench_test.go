package optin_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/optin"
	"github.com/sendonce/sendonce/internal/transactional"
)

// BenchmarkSignupDouble is one double opt-in sign-up of a new address: the account
// look-up, then one transaction with the list lock, the suppression check, the
// subscriber, the pending membership, the one-per-hour compare-and-set and the
// confirmation message with its send row. ns/op is wall time per sign-up, one at
// a time, PostgreSQL on the same machine:
//
//	go test -run '^$' -bench BenchmarkSignupDouble -benchtime 2000x -count 5 ./internal/optin/
func BenchmarkSignupDouble(b *testing.B) {
	pool := dbtest.New(b)
	ctx := context.Background()
	var acct, list int64
	var pub string
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO accounts (name) VALUES ('a') RETURNING id, public_id`).Scan(&acct, &pub))
	require.NoError(b, pool.QueryRow(ctx, `INSERT INTO lists (account_id, name, optin, public, optin_from_email)
		VALUES ($1, 'News', 'double', true, 'news@example.com') RETURNING id`, acct).Scan(&list))
	svc := optin.NewService(pool, transactional.NewService(pool, nil), mustSigner(b), optin.Options{PublicURL: "https://x.example"})
	for i := 0; b.Loop(); i++ {
		_, err := svc.Signup(ctx, pub, optin.Request{Email: "bench" + strconv.Itoa(i) + "@example.com", ListIDs: []int64{list}})
		if err != nil {
			b.Fatal(err)
		}
	}
}
