package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/subscriber"
)

// Seed creates an account with n confirmed subscribers through the product's bulk
// import and returns the account, an API key for it and the import's rate.
func Seed(ctx context.Context, pool *pgxpool.Pool, n int) (accountID int64, apiKey string, imported Rate, err error) {
	acc, key, err := account.NewService(pool).Create(ctx, fmt.Sprintf("bench-%d", time.Now().UnixNano()))
	if err != nil {
		return 0, "", imported, fmt.Errorf("create account: %w", err)
	}
	imported, err = importSubscribers(ctx, pool, acc.ID, 0, n, nil)
	if err != nil {
		return 0, "", imported, fmt.Errorf("import: %w", err)
	}
	return acc.ID, key, imported, nil
}

// importSubscribers creates confirmed subscribers number from to n-1 through the
// product's own bulk import (validation, then one upsert from arrays per batch), into the
// list listID when not nil, in requests of the largest size the API accepts, and
// times only the imports, not the generation of rows.
func importSubscribers(ctx context.Context, pool *pgxpool.Pool, accountID int64, from, n int, listID *int64) (Rate, error) {
	svc := subscriber.NewService(pool)
	confirmed := subscriber.StatusConfirmed
	var r Rate
	for start := from; start < n; start += subscriber.MaxImportRows {
		rows := make([]subscriber.ImportRow, 0, min(subscriber.MaxImportRows, n-start))
		for i := start; i < n && len(rows) < cap(rows); i++ {
			name := fmt.Sprintf("Subscriber %d", i)
			rows = append(rows, subscriber.ImportRow{
				Line:       i - start + 2,
				Email:      fmt.Sprintf("user%07d@example.com", i),
				Name:       &name,
				Status:     &confirmed,
				Attributes: map[string]any{"plan": plans[i%len(plans)]},
			})
		}
		began := time.Now()
		res, err := svc.Import(ctx, accountID, rows, nil, listID)
		r.Secs += time.Since(began).Seconds()
		if err != nil {
			return r, err
		}
		if len(res.Rejected) > 0 {
			return r, fmt.Errorf("%d rows rejected, first: %+v", len(res.Rejected), res.Rejected[0])
		}
		r.Rows += res.Inserted
	}
	return r, nil
}

var plans = []string{"free", "pro", "team"}
