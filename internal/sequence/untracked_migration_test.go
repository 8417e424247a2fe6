package sequence_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/sequence"
	"github.com/sendonce/sendonce/internal/testfactory"
)

// TestMigrationUntracksStepsWithoutStoredLinks: migration 00360 turns click
// tracking off for the step campaigns that have literal links but none stored
// (made before step campaigns stored them), whose redirects would find no URL
// now that the executor tracks step mail; a step with its links stored keeps
// tracking.
func TestMigrationUntracksStepsWithoutStoredLinks(t *testing.T) {
	e := setup(t)
	acct := e.account("a")
	tpl := testfactory.New(e.pool).Template(t, acct, testfactory.Template{Name: "offer", Subject: "Offer",
		HTML: `<p><a href="https://example.com/offer">See the offer</a></p>`})
	step0 := func() int64 {
		seq, err := e.svc.Create(e.ctx, acct, welcome(tpl, sequence.Trigger{Type: sequence.TriggerManual}, "1h"))
		require.NoError(t, err)
		_, err = e.svc.Transition(e.ctx, acct, seq.ID, sequence.Activate)
		require.NoError(t, err)
		return e.int64(`SELECT campaign_id FROM sequence_steps WHERE sequence_id = $1 AND position = 0`, seq.ID)
	}
	old, current := step0(), step0()
	e.exec(`DELETE FROM tracked_links WHERE campaign_id = $1`, old) // as made before links were stored

	b, err := os.ReadFile("../../db/migrations/00360_sequence_untracked_steps.sql")
	require.NoError(t, err)
	up, _, ok := strings.Cut(string(b), "-- +goose Down")
	require.True(t, ok)
	_, up, ok = strings.Cut(up, "-- +goose Up")
	require.True(t, ok)
	e.exec(up)
	require.Equal(t, "false", e.text(`SELECT track_clicks::text FROM campaigns WHERE id = $1`, old))
	require.Equal(t, "true", e.text(`SELECT track_clicks::text FROM campaigns WHERE id = $1`, current))
}
