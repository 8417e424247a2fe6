package httpapi_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/config"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/httpapi"
	"github.com/sendonce/sendonce/internal/httpapi/httpapitest"
	"github.com/sendonce/sendonce/internal/store"
	"github.com/sendonce/sendonce/internal/testfactory"
	"github.com/sendonce/sendonce/internal/token"
	"github.com/sendonce/sendonce/internal/unsubscribe"
	"github.com/sendonce/sendonce/internal/webhook"
)

// optoutEnv is a running API with one account, one subscriber and one campaign that
// has a send to that subscriber.
type optoutEnv struct {
	ctx          context.Context
	pool         *pgxpool.Pool
	url          string
	key          string
	signer       *unsubscribe.Signer
	accountID    int64
	campaignID   int64
	subscriberID int64
}

func setupOptout(t *testing.T, language string) *optoutEnv {
	t.Helper()
	e := &optoutEnv{ctx: context.Background(), pool: dbtest.New(t)}
	accounts := account.NewService(e.pool)
	acc, key, err := accounts.Create(e.ctx, "optout")
	require.NoError(t, err)
	e.accountID, e.key = acc.ID, key
	keys, err := token.NewRing([]string{"k1:test-secret-0123456789abcdef"})
	require.NoError(t, err)
	e.signer = unsubscribe.NewSigner(keys)
	// Ids that differ: accounts 2 and 3 exist with public lists, the recipient is
	// subscriber 3 of account 1 and the campaign's id is 5, so a query that swaps
	// two ids reads another tenant's rows instead of passing by coincidence.
	for _, name := range []string{"second", "third"} {
		other, _, err := accounts.Create(e.ctx, name)
		require.NoError(t, err)
		_, err = store.New(e.pool).ListCreate(e.ctx, store.ListCreateParams{AccountID: other.ID, Name: "Public list of " + name,
			Optin: "single", Public: true, OptinFromEmail: "news@example.com"})
		require.NoError(t, err)
	}
	_, err = e.pool.Exec(e.ctx, `SELECT setval(pg_get_serial_sequence('subscribers', 'id'), 2),
		setval(pg_get_serial_sequence('campaigns', 'id'), 4)`)
	require.NoError(t, err)
	f := testfactory.New(e.pool)
	e.subscriberID = f.Subscriber(t, e.accountID, testfactory.Subscriber{Email: "Ada@Example.com", Status: "confirmed"})
	e.campaignID = f.Campaign(t, e.accountID, testfactory.Campaign{FromEmail: "news@example.com", Language: language})
	f.Send(t, e.accountID, e.campaignID, e.subscriberID, testfactory.Send{Email: "Ada@Example.com", JobID: "job-ada",
		Status: "sent", ProviderMessageID: "pm-ada"})

	cfg := config.Default()
	srv := httptest.NewServer(httpapitest.New(t, e.pool, cfg, func(d *httpapi.Deps) {
		d.Unsubscribe = unsubscribe.NewService(e.pool, e.signer)
		d.Webhooks = webhook.API{Service: webhook.NewService(e.pool, webhook.Options{})}
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

// link is the List-Unsubscribe URL the executor would put in this recipient's message.
func (e *optoutEnv) link() string {
	u, _ := e.signer.Links(e.url, "")(e.accountID, e.campaignID, e.subscriberID)
	return u
}

func (e *optoutEnv) suppressed(t *testing.T) (reason, source string) {
	t.Helper()
	_ = e.pool.QueryRow(e.ctx, `SELECT reason, source FROM suppressions WHERE account_id = $1 AND email_lower = 'ada@example.com'`,
		e.accountID).Scan(&reason, &source)
	return reason, source
}
