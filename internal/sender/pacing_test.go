package sender_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sendonce/sendonce/internal/account"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/dbtest"
	"github.com/sendonce/sendonce/internal/pacing"
	"github.com/sendonce/sendonce/internal/sender"
	"github.com/sendonce/sendonce/internal/store"
)

// TestSenderPacingFields: domain limits and a warm-up are validated (422 naming
// the field, nothing stored), stored, replaced by an edit and removed; the
// sender shows today's warm-up cap and what was used of it.
func TestSenderPacingFields(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	_, _, err := account.NewService(pool).Create(ctx, "other")
	require.NoError(t, err)
	acc, _, err := account.NewService(pool).Create(ctx, "a")
	require.NoError(t, err)
	svc := sender.NewService(pool, nil)
	in := func() sender.Input {
		return sender.Input{Name: "http", Type: "http", Settings: sender.Settings{URL: "https://mail.example.com/send"}}
	}
	for ptr, bad := range map[string]func(*sender.Input){
		"/domain_limits/0/group":      func(i *sender.Input) { i.DomainLimits = []pacing.DomainLimit{{Group: "hotmail", PerSecond: 1}} },
		"/domain_limits/0/per_second": func(i *sender.Input) { i.DomainLimits = []pacing.DomainLimit{{Group: "gmail"}} },
		"/domain_limits/0": func(i *sender.Input) {
			i.DomainLimits = []pacing.DomainLimit{{Group: "gmail", Domain: "x.org", PerSecond: 1}}
		},
		"/domain_limits/1": func(i *sender.Input) {
			i.DomainLimits = []pacing.DomainLimit{{Group: "gmail", PerSecond: 1}, {Domain: "GoogleMail.com", PerSecond: 2}}
		},
		"/domain_limits/0/domain": func(i *sender.Input) { i.DomainLimits = []pacing.DomainLimit{{Domain: "a@b", PerSecond: 1}} },
		"/warmup/start":           func(i *sender.Input) { i.Warmup = &pacing.Warmup{Preset: "standard", Start: "tomorrow"} },
		"/warmup/preset":          func(i *sender.Input) { i.Warmup = &pacing.Warmup{Preset: "fast", Start: "2026-12-01"} },
		"/warmup/caps/1":          func(i *sender.Input) { i.Warmup = &pacing.Warmup{Caps: []int{10, 0}, Start: "2026-12-01"} },
		"/warmup":                 func(i *sender.Input) { i.Warmup = &pacing.Warmup{Start: "2026-12-01"} },
	} {
		i := in()
		bad(&i)
		_, err := svc.Create(ctx, acc.ID, i)
		var ae *apperr.Error
		require.ErrorAs(t, err, &ae, ptr)
		require.Equal(t, apperr.Invalid, ae.Code, ptr)
		require.Equal(t, ptr, ae.Fields[0].Pointer)
	}
	list, err := svc.List(ctx, acc.ID, 0, 10)
	require.NoError(t, err)
	require.Empty(t, list, "a refused sender was stored")

	today := pacing.Day(time.Now())
	i := in()
	i.DomainLimits = []pacing.DomainLimit{{Group: "gmail", PerSecond: 5}, {Domain: "example.org", PerSecond: 0.5}}
	i.Warmup = &pacing.Warmup{Caps: []int{10, 20}, Start: today.Format(time.DateOnly)}
	sn, err := svc.Create(ctx, acc.ID, i)
	require.NoError(t, err)
	require.Equal(t, i.DomainLimits, sn.DomainLimits)
	require.Equal(t, i.Warmup, sn.Warmup)
	require.NotNil(t, sn.WarmupToday)
	require.Equal(t, 0, sn.WarmupToday.DayNumber)
	require.Equal(t, 10, *sn.WarmupToday.Cap)
	require.Zero(t, sn.WarmupToday.Used)

	// Sends counted today show; a take beyond the cap gets nothing.
	q := store.New(pool)
	day := store.SenderWarmupTakeParams{AccountID: acc.ID, SenderID: sn.ID, Want: 4, DayCap: 10}
	day.Day.Time, day.Day.Valid = today, true
	got, err := q.SenderWarmupTake(ctx, day)
	require.NoError(t, err)
	require.EqualValues(t, 4, got)
	day.Want = 7
	got, err = q.SenderWarmupTake(ctx, day)
	require.NoError(t, err)
	require.EqualValues(t, 6, got, "only what is left of the cap")
	got, err = q.SenderWarmupTake(ctx, day)
	require.NoError(t, err)
	require.Zero(t, got)
	sn, err = svc.Get(ctx, acc.ID, sn.ID)
	require.NoError(t, err)
	require.Equal(t, 10, sn.WarmupToday.Used)

	// An edit replaces the limits whole and removes the warm-up.
	none := []pacing.DomainLimit{}
	sn, err = svc.Update(ctx, acc.ID, sn.ID, sender.Patch{DomainLimits: &none, ClearWarmup: true})
	require.NoError(t, err)
	require.Empty(t, sn.DomainLimits)
	require.Nil(t, sn.Warmup)
	require.Nil(t, sn.WarmupToday)
	_, err = svc.Update(ctx, acc.ID, sn.ID, sender.Patch{ClearWarmup: true, Warmup: i.Warmup})
	require.ErrorContains(t, err, "clear_warmup")
}
