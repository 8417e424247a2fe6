package sequence_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/store"
)

// TestArchiveEndsEnrollmentsInBoundedTransactions: archiving a sequence with
// 2,500 running enrollments ends every one of them (state exited, reason
// archived, a timeline line each), and no transaction ends more than 1,000:
// every account's event readers wait below the oldest running transaction, so an
// archive that ended them all in one statement held them all back for as long as
// it ran. Which transaction wrote each row is read from its xmin. Another
// sequence's enrollments run on.
func TestArchiveEndsEnrollmentsInBoundedTransactions(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	const n = 2500
	var seqs [2]int64
	for i := range seqs {
		s, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
		require.NoError(t, err)
		_, err = e.svc.Transition(e.ctx, acct, s.ID, sequence.Activate)
		require.NoError(t, err)
		e.exec(`INSERT INTO sequence_enrollments (account_id, sequence_id, subscriber_id, email, due_at, trigger, step)
			SELECT $1, $2, i, 's' || i || '@example.com', $3::timestamptz + interval '1 hour', 'manual', 2
			FROM generate_series(1, $4::int) i`, acct, s.ID, e.clock.Now(), n)
		seqs[i] = s.ID
	}
	archived, running := seqs[0], seqs[1]

	got, err := e.svc.Transition(e.ctx, acct, archived, sequence.Archive)
	require.NoError(t, err)
	require.Equal(t, sequence.StatusArchived, got.Status)
	require.Equal(t, int64(n), e.int64(`SELECT count(*) FROM sequence_enrollments
		WHERE sequence_id = $1 AND state = 'exited' AND exit_reason = 'archived'`, archived))
	require.Equal(t, int64(n), e.int64(`SELECT count(*) FROM sequence_step_log
		WHERE sequence_id = $1 AND outcome = 'exited' AND reason = 'archived'`, archived))
	require.Equal(t, int64(n), e.int64(`SELECT count(*) FROM sequence_enrollments WHERE sequence_id = $1 AND state = 'active'`, running))
	worst := e.int64(`SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM sequence_enrollments
		WHERE sequence_id = $1 GROUP BY xmin::text) x`, archived)
	require.LessOrEqual(t, worst, int64(1000), "one transaction ended %d enrollments", worst)
}

// TestArchivedSequenceLeftoversAreNeverAdvanced: enrollments an archive left
// running (its process killed between batches) are due, but the advancer does not
// move them (its claim takes only an active sequence's); the sweep the executors'
// maintenance runs ends them as the archive would have.
func TestArchivedSequenceLeftoversAreNeverAdvanced(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	s, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, s.ID, sequence.Activate)
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, s.ID, sequence.Archive)
	require.NoError(t, err)
	// As if the archive had stopped before its batches: three enrollments still
	// running, due now.
	e.exec(`INSERT INTO sequence_enrollments (account_id, sequence_id, subscriber_id, email, due_at, trigger)
		SELECT $1, $2, i, 's' || i || '@example.com', $3, 'manual' FROM generate_series(1, 3) i`, acct, s.ID, e.clock.Now())
	e.clock.Add(time.Minute)
	require.Zero(t, e.tick())
	require.Empty(t, e.sends(s.ID))
	require.Equal(t, int64(3), e.int64(`SELECT count(*) FROM sequence_enrollments WHERE sequence_id = $1 AND state = 'active' AND step = 0`, s.ID))

	n, err := sequence.ExitArchivedLeftovers(e.ctx, store.New(e.pool), nil)
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	require.Equal(t, int64(3), e.int64(`SELECT count(*) FROM sequence_enrollments
		WHERE sequence_id = $1 AND state = 'exited' AND exit_reason = 'archived'`, s.ID))
	require.Empty(t, e.sends(s.ID))
}

// TestAdvanceClaimedAsTheArchiveCommitsAdvancesNothing: the advancer's claim reads
// the sequence active while an archive is about to commit. The batch must not
// advance those enrollments after the archive: before it reads the sequence again
// it takes the lock the archive's transaction holds (shared, against the
// transition's exclusive), so it waits for that commit and then sees it archived. (Without that, the batch queued the step's send into the archived
// sequence's cancelled campaign and moved the enrollment on.)
func TestAdvanceClaimedAsTheArchiveCommitsAdvancesNothing(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := e.template(acct)
	s, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
	require.NoError(t, err)
	_, err = e.svc.Transition(e.ctx, acct, s.ID, sequence.Activate)
	require.NoError(t, err)
	sub := e.subscriber(acct, "a@example.com", 0)
	_, _, err = e.svc.Enroll(e.ctx, acct, s.ID, sub, "", nil)
	require.NoError(t, err)

	// The archive's transaction as Transition runs it, stopped before its commit.
	archive, err := e.pool.Begin(e.ctx)
	require.NoError(t, err)
	defer func() { _ = archive.Rollback(e.ctx) }()
	q := store.New(archive)
	require.NoError(t, q.SequenceTransitionLock(e.ctx, int32(s.ID)))
	_, err = q.SequenceTransition(e.ctx, store.SequenceTransitionParams{AccountID: acct, ID: s.ID,
		To: sequence.StatusArchived, From: []string{sequence.StatusActive}})
	require.NoError(t, err)

	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := e.adv.Advance(e.ctx)
		done <- result{n, err}
	}()
	// Wait until the batch waits for the archive's lock, or has finished without.
	var finished *result
	require.Eventually(t, func() bool {
		select {
		case r := <-done:
			finished = &r
			return true
		default:
		}
		return e.int64(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) > 0
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, archive.Commit(e.ctx))
	if finished == nil {
		r := <-done
		finished = &r
	}
	require.NoError(t, finished.err)
	require.Empty(t, e.sends(s.ID), "a step was sent after the archive")
	state, step, _ := e.enrollment(s.ID, sub)
	require.Equal(t, "active", state)
	require.Equal(t, 0, step, "the enrollment moved after the archive")
}
