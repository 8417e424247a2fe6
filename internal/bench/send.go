package bench

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"
)

// errNoExecutor: the executor (issue 4) is not on this branch yet.
var errNoExecutor = errors.New("executor not built")

// sendCampaign runs one campaign through the real executor. Until the executor
// lands it reports errNoExecutor.
func sendCampaign(ctx context.Context, pool *pgxpool.Pool, accountID int64, o Options) (build Rate, send Send, err error) {
	return build, send, errNoExecutor
}
