package executor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// outcome claims one row, sends it through p and acknowledges the result.
func outcome(t *testing.T, e *Executor, c *campaign) store.SendClaimBatchRow {
	t.Helper()
	rows, err := e.claim(context.Background(), c, 1)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	e.flush([]result{e.send(context.Background(), job{campaign: c, row: rows[0]})})
	return rows[0]
}

type sendRow struct {
	Status, LastError, ProviderID string
	Attempts                      int
	NextAttempt                   time.Time
	SentAt, Lease                 *time.Time
}

func readSend(t *testing.T, pool *pgxpool.Pool, id int64) sendRow {
	t.Helper()
	var r sendRow
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT status, coalesce(last_error, ''),
		coalesce(provider_message_id, ''), attempts, greatest(next_attempt_at, '2000-01-01'), sent_at, lease_until FROM sends WHERE id = $1`, id).
		Scan(&r.Status, &r.LastError, &r.ProviderID, &r.Attempts, &r.NextAttempt, &r.SentAt, &r.Lease))
	return r
}

func TestAcknowledgementTransitions(t *testing.T) {
	t.Parallel()
	ambiguous := &provider.Error{Class: provider.Ambiguous, Err: errors.New("connection lost after DATA")}
	permanent := &provider.Error{Class: provider.Permanent, Code: 550, Err: errors.New("no such user")}
	for _, tc := range []struct {
		name       string
		idempotent bool
		policy     string
		err        error
		attempts   int // attempts made before this one
		want       string
	}{
		{"accepted", true, "skip", nil, 0, "sent"},
		{"temporary requeues with backoff", false, "skip", temporary("try later"), 0, "queued"},
		{"temporary at the last attempt fails", false, "skip", temporary("try later"), 2, "failed"},
		{"permanent fails", false, "skip", permanent, 0, "failed"},
		{"ambiguous on an idempotent provider requeues", true, "skip", ambiguous, 0, "queued"},
		{"ambiguous on plain SMTP with skip is unknown", false, "skip", ambiguous, 0, "unknown"},
		{"ambiguous on plain SMTP with retry requeues", false, "retry", ambiguous, 0, "queued"},
		{"unclassified errors are ambiguous", false, "skip", errors.New("eof"), 0, "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			p := newFake(tc.idempotent)
			p.fail = func(provider.Message, int) error { return tc.err }
			f, e, c := started(t, 1, tc.policy, p, clk)
			f.exec(`UPDATE sends SET attempts = $1`, tc.attempts)
			row := outcome(t, e, c)
			got := readSend(t, f.pool, row.ID)
			require.Equal(t, tc.want, got.Status)
			require.Nil(t, got.Lease)
			require.Equal(t, tc.attempts+1, got.Attempts)
			switch tc.want {
			case "sent":
				require.Equal(t, "pid-"+row.JobID, got.ProviderID)
				require.True(t, clk.Now().Equal(*got.SentAt))
				require.Empty(t, got.LastError)
			case "queued":
				require.NotEmpty(t, got.LastError)
				if tc.err != nil && provider.ClassOf(tc.err) == provider.Temporary {
					// First retry: BackoffBase (1s) with jitter over its upper half.
					require.GreaterOrEqual(t, got.NextAttempt, clk.Now().Add(500*time.Millisecond))
					require.LessOrEqual(t, got.NextAttempt, clk.Now().Add(time.Second))
				}
			default:
				require.NotEmpty(t, got.LastError)
				require.Nil(t, got.SentAt)
			}
		})
	}
}

func TestRescuerSettlesExpiredLeases(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		idempotent bool
		policy     string
		want       string
	}{
		{"idempotent provider replays", true, "skip", "queued"},
		{"plain SMTP with skip marks unknown", false, "skip", "unknown"},
		{"plain SMTP with retry replays", false, "retry", "queued"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			f, e, c := started(t, 4, tc.policy, newFake(tc.idempotent), clk)
			ctx := context.Background()
			rows, err := e.claim(ctx, c, 4)
			require.NoError(t, err)

			clk.Add(59 * time.Second)
			n, err := e.rescue(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "leases still valid")

			clk.Add(2 * time.Second)
			n, err = e.rescue(ctx)
			require.NoError(t, err)
			require.Equal(t, 4, n)
			require.Equal(t, map[string]int{tc.want: 4}, f.counts(c.ID))

			if tc.want == "queued" {
				again, err := e.claim(ctx, c, 4)
				require.NoError(t, err)
				require.Len(t, again, 4)
				for i := range again {
					require.Equal(t, rows[i].JobID, again[i].JobID, "the replay keeps the job id")
					require.Equal(t, int32(2), again[i].Attempts)
				}
				// A late acknowledgement from the process that held the first lease
				// must not land on the new claim (the attempts fence).
				e.flush([]result{{id: rows[0].ID, attempts: rows[0].Attempts, status: "sent", providerID: "late"}})
				require.Equal(t, "sending", readSend(t, f.pool, rows[0].ID).Status)
			}
		})
	}
}

// TestBrokenTemplateFailsRowsAndNeverCallsTheProvider: the API refuses templates that
// do not parse, but a row must not loop forever if one gets through.
func TestBrokenTemplateFailsRowsAndNeverCallsTheProvider(t *testing.T) {
	t.Parallel()
	clk := newClock()
	p := newFake(true)
	f, e, c := started(t, 2, "skip", p, clk)
	f.exec(`UPDATE campaigns SET html_template = '{{.Nope' WHERE id = $1`, c.ID)
	c = sendingCampaign(t, e, c.ID)
	require.Error(t, c.tmplErr)
	row := outcome(t, e, c)
	got := readSend(t, f.pool, row.ID)
	require.Equal(t, "failed", got.Status)
	require.Contains(t, got.LastError, "html template")
	calls, _, _ := p.snapshot()
	require.Empty(t, calls)
}
