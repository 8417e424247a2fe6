package sequence_test

import (
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/subscriber"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// proSegment is a segment of the account's subscribers whose plan is "pro".
func (e *env) proSegment(acct int64) int64 {
	return testfactory.New(e.pool).Segment(e.t, acct, testfactory.Segment{Name: "pro " + rand.Text(),
		Match: `$.plan == "pro"`})
}

func (e *env) segmentSequence(acct, seg int64) sequence.Sequence {
	e.t.Helper()
	seq, err := e.svc.Create(e.ctx, acct, welcome(e.template(acct), sequence.Trigger{Type: sequence.TriggerSegment, SegmentID: &seg}, "1h"))
	require.NoError(e.t, err)
	_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
	require.NoError(e.t, err)
	return seq
}

// TestSegmentTriggerOnWrite: the write that makes a confirmed subscriber match the
// segment enrolls them in its own transaction (no sweep needed); a second match
// changes nothing; a pending subscriber is enrolled when confirmed.
func TestSegmentTriggerOnWrite(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	seq := e.segmentSequence(acct, e.proSegment(acct))
	subs := subscriber.NewService(e.pool)
	enrolled := func(id int64) int64 {
		return e.int64(`SELECT count(*) FROM sequence_enrollments WHERE sequence_id = $1 AND subscriber_id = $2`, seq.ID, id)
	}

	ada, err := subs.Create(e.ctx, acct, subscriber.Input{Email: "ada@example.com", Status: subscriber.StatusConfirmed,
		Attributes: map[string]any{"plan": "free"}})
	require.NoError(t, err)
	require.Zero(t, enrolled(ada.ID))
	_, err = subs.Update(e.ctx, acct, ada.ID, subscriber.Patch{Attributes: map[string]any{"plan": "pro"}})
	require.NoError(t, err)
	require.EqualValues(t, 1, enrolled(ada.ID), "the update that made her match enrolled her")
	_, err = subs.Update(e.ctx, acct, ada.ID, subscriber.Patch{Attributes: map[string]any{"plan": "pro", "seats": 3}})
	require.NoError(t, err)
	require.EqualValues(t, 1, enrolled(ada.ID), "a second match changes nothing")
	e.tick()
	require.Equal(t, map[string]string{sequence.JobID(seq.ID, 0, ada.ID): "queued"}, e.sends(seq.ID))

	// Created matching but pending: not yet; confirmed: enrolled.
	bob, err := subs.Create(e.ctx, acct, subscriber.Input{Email: "bob@example.com", Attributes: map[string]any{"plan": "pro"}})
	require.NoError(t, err)
	require.Zero(t, enrolled(bob.ID))
	_, err = subs.Confirm(e.ctx, acct, bob.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, enrolled(bob.ID))

	// Created confirmed and matching: enrolled at once.
	cy, err := subs.Create(e.ctx, acct, subscriber.Input{Email: "cy@example.com", Status: subscriber.StatusConfirmed,
		Attributes: map[string]any{"plan": "pro"}})
	require.NoError(t, err)
	require.EqualValues(t, 1, enrolled(cy.ID))

	// Another account's subscriber matching its own "pro" segment is not enrolled here.
	other := e.account("b")
	_, err = subs.Create(e.ctx, other, subscriber.Input{Email: "ada@example.com", Status: subscriber.StatusConfirmed,
		Attributes: map[string]any{"plan": "pro"}})
	require.NoError(t, err)
	require.EqualValues(t, 3, e.int64(`SELECT count(*) FROM sequence_enrollments WHERE sequence_id = $1`, seq.ID))
}

// TestSegmentSweepChunkedFairAndOncePerMinute: subscribers that came to match
// without a write the trigger sees (here plain SQL, as an import) are found by the
// sweep, a chunk of an account's subscribers per pass, so a big account takes
// several passes while a small one is done in the first; a finished scan starts
// over only a minute later; a sequence another executor holds is skipped, not
// waited for.
func TestSegmentSweepChunkedFairAndOncePerMinute(t *testing.T) {
	e := setup(t)
	e.adv.SegmentChunk = 5
	big, small := e.account("big"), e.account("small")
	seqBig := e.segmentSequence(big, e.proSegment(big))
	seqSmall := e.segmentSequence(small, e.proSegment(small))
	fx := testfactory.New(e.pool)
	pro, free := json.RawMessage(`{"plan": "pro"}`), json.RawMessage(`{"plan": "free"}`)
	// Every fourth pending, every third on the free plan.
	fx.BulkSubscribers(t, big, testfactory.Bulk{Prefix: "b", N: 24,
		Statuses: []string{"confirmed", "confirmed", "confirmed", "pending"}, Attributes: []json.RawMessage{pro, pro, free}})
	fx.BulkSubscribers(t, small, testfactory.Bulk{Prefix: "s", N: 2, Statuses: []string{"confirmed"},
		Attributes: []json.RawMessage{pro}})
	want := e.int64(`SELECT count(*) FROM subscribers WHERE account_id = $1 AND status = 'confirmed' AND attributes->>'plan' = 'pro'`, big)
	count := func(seq int64) int64 {
		return e.int64(`SELECT count(*) FROM sequence_enrollments WHERE sequence_id = $1`, seq)
	}

	require.NoError(t, e.adv.Sweep(e.ctx))
	require.EqualValues(t, 2, count(seqSmall.ID), "the small account is done in the first pass")
	first := count(seqBig.ID)
	require.Positive(t, first)
	require.Less(t, first, want, "one pass reads one chunk of the big account")
	for i := 0; i < 10 && count(seqBig.ID) < want; i++ {
		require.NoError(t, e.adv.Sweep(e.ctx)) // the clock does not move: a scan in progress goes on at once
	}
	require.Equal(t, want, count(seqBig.ID))
	require.NoError(t, e.adv.Sweep(e.ctx)) // reaches the end of the scan
	require.Equal(t, want, count(seqBig.ID), "a second look enrolls nobody twice")

	// A new match is found by the next full scan, a minute later, not before.
	testfactory.New(e.pool).Subscriber(t, big, testfactory.Subscriber{Email: "late@example.com", Status: "confirmed",
		Attributes: []byte(`{"plan":"pro"}`)})
	for range 3 {
		require.NoError(t, e.adv.Sweep(e.ctx))
	}
	require.Equal(t, want, count(seqBig.ID), "a finished scan starts over only a minute later")

	// Another executor holds the sequence's row: this sweep skips it without waiting.
	e.clock.Add(time.Minute)
	tx, err := e.pool.BeginTx(e.ctx, pgx.TxOptions{})
	require.NoError(t, err)
	_, err = tx.Exec(e.ctx, `SELECT 1 FROM sequences WHERE id = $1 FOR UPDATE`, seqBig.ID)
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, e.adv.Sweep(e.ctx))
	}
	require.Equal(t, want, count(seqBig.ID))
	require.NoError(t, tx.Rollback(e.ctx))
	for range 10 {
		require.NoError(t, e.adv.Sweep(e.ctx))
	}
	require.Equal(t, want+1, count(seqBig.ID))
}

func TestSegmentTriggerValidation(t *testing.T) {
	e := setup(t)
	acct, other := e.account("a"), e.account("b")
	tpl := e.template(acct)
	theirs := e.proSegment(other)
	for field, trig := range map[string]sequence.Trigger{
		"/trigger/segment_id":  {Type: sequence.TriggerSegment},
		"/trigger/segment_id ": {Type: sequence.TriggerSegment, SegmentID: &theirs},
		" /trigger/segment_id": {Type: sequence.TriggerManual, SegmentID: ptr(e.proSegment(acct))},
	} {
		_, err := e.svc.Create(e.ctx, acct, welcome(tpl, trig, "1h"))
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae, field)
		require.Equal(t, apperr.Invalid, ae.Code, field)
		require.Equal(t, "/trigger/segment_id", ae.Fields[0].Pointer, "%s: %v", field, err)
	}
	require.Zero(t, e.int64(`SELECT count(*) FROM sequences`))
}
