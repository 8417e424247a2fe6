package sendwindow

import (
	"errors"
	"testing"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
)

func at(t *testing.T, zone, s string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenAndNext(t *testing.T) {
	weekdays := Window{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:00", TimeZone: "Europe/Berlin"}.Bind("")
	overnight := Window{Days: []string{"fri"}, Start: "22:00", End: "06:00"}.Bind("America/New_York")
	cases := []struct {
		name      string
		s         Schedule
		zone, now string
		open      bool
		next      string // in zone
	}{
		{"inside", weekdays, "Europe/Berlin", "2026-12-07 10:00", true, "2026-12-07 10:00"}, // a Monday
		{"at start", weekdays, "Europe/Berlin", "2026-12-07 09:00", true, "2026-12-07 09:00"},
		{"at end is closed", weekdays, "Europe/Berlin", "2026-12-07 17:00", false, "2026-12-08 09:00"},
		{"before start", weekdays, "Europe/Berlin", "2026-12-07 08:59", false, "2026-12-07 09:00"},
		{"friday evening waits for monday", weekdays, "Europe/Berlin", "2026-12-11 18:00", false, "2026-12-14 09:00"},
		{"saturday", weekdays, "Europe/Berlin", "2026-12-12 12:00", false, "2026-12-14 09:00"},
		{"overnight friday", overnight, "America/New_York", "2026-12-11 23:00", true, "2026-12-11 23:00"},
		{"overnight into saturday", overnight, "America/New_York", "2026-12-12 05:59", true, "2026-12-12 05:59"},
		{"overnight over", overnight, "America/New_York", "2026-12-12 06:00", false, "2026-12-18 22:00"},
		{"overnight not thursday night", overnight, "America/New_York", "2026-12-11 03:00", false, "2026-12-11 22:00"},
	}
	for _, c := range cases {
		now := at(t, c.zone, c.now)
		if got := c.s.Open(now); got != c.open {
			t.Errorf("%s: Open = %v, want %v", c.name, got, c.open)
		}
		if got, want := c.s.Next(now), at(t, c.zone, c.next); !got.Equal(want) {
			t.Errorf("%s: Next = %v, want %v", c.name, got.In(want.Location()), want)
		}
	}
}

func TestNextAcrossDST(t *testing.T) {
	// Europe/Berlin springs forward on 2027-03-28 at 02:00 to 03:00: a window
	// opening at 02:30 opens when the clocks jump, 03:00 CEST.
	s := Window{Days: []string{"sun"}, Start: "02:30", End: "04:00", TimeZone: "Europe/Berlin"}.Bind("")
	now := at(t, "Europe/Berlin", "2027-03-28 01:00")
	got := s.Next(now)
	if want := at(t, "Europe/Berlin", "2027-03-28 03:00"); !got.Equal(want) {
		t.Fatalf("spring forward: Next = %v, want %v", got, want)
	}
	// And it falls back on 2027-10-31 at 03:00 to 02:00: a window opening at 02:30
	// opens at one of the two 02:30s, and once open it is open.
	now = at(t, "Europe/Berlin", "2027-10-31 01:00")
	got = s.Next(now)
	if l := got.In(s.loc); l.Hour() != 2 || l.Minute() != 30 || !s.Open(got) {
		t.Fatalf("fall back: Next = %v", l)
	}
}

func TestCheckNamesTheField(t *testing.T) {
	good := Window{Days: []string{"mon"}, Start: "09:00", End: "17:00"}
	cases := []struct {
		w     Window
		field string
	}{
		{Window{Start: "09:00", End: "17:00"}, "/send_window/days"},
		{Window{Days: []string{"mon", "funday"}, Start: "09:00", End: "17:00"}, "/send_window/days/1"},
		{Window{Days: []string{"mon", "mon"}, Start: "09:00", End: "17:00"}, "/send_window/days/1"},
		{Window{Days: []string{"mon"}, Start: "9:00", End: "17:00"}, "/send_window/start"},
		{Window{Days: []string{"mon"}, Start: "09:00", End: "24:00"}, "/send_window/end"},
		{Window{Days: []string{"mon"}, Start: "09:00", End: "09:00"}, "/send_window/end"},
		{Window{Days: []string{"mon"}, Start: "09:00", End: "17:00", TimeZone: "Mars/Olympus"}, "/send_window/time_zone"},
		{Window{Days: []string{"mon"}, Start: "09:00", End: "17:00", TimeZone: "Local"}, "/send_window/time_zone"},
	}
	if err := good.Check("/send_window"); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		err := c.w.Check("/send_window")
		var ae *apperr.Error
		if !errors.As(err, &ae) || len(ae.Fields) != 1 || ae.Fields[0].Pointer != c.field {
			t.Errorf("%+v: err = %v, want field %s", c.w, err, c.field)
		}
	}
}
