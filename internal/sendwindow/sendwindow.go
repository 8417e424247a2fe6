// Package sendwindow is a campaign's sending window: the weekdays and the hours of
// the day, in one time zone, during which its rows may be claimed (quiet hours
// outside). The executor's dealer asks Open before it claims for a campaign and,
// when closed, waits until Next without asking PostgreSQL anything in between
// (docs/executor.md, "Sending windows").
package sendwindow

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // the zones are the same in a distroless image as on a laptop

	"github.com/sendonce/sendonce/internal/apperr"
)

// Window is the wire and stored form: days ("mon" … "sun"), start and end as HH:MM
// on a 24-hour clock (end before start: the window runs overnight into the next
// day), and the IANA zone they are read in ("": the account's time_zone).
type Window struct {
	Days     []string `json:"days"`
	Start    string   `json:"start"`
	End      string   `json:"end"`
	TimeZone string   `json:"time_zone,omitempty"`
}

// Weekdays maps the API's day names to time.Weekday (the sequences' wait steps
// use the same names).
var Weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday,
	"wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

var clock = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// ValidZone reports whether z names an IANA zone (not "Local", which is the
// machine's and so differs between replicas).
func ValidZone(z string) bool {
	if z == "" || len(z) > 64 || strings.EqualFold(z, "local") {
		return false
	}
	_, err := time.LoadLocation(z)
	return err == nil
}

// Check validates w, naming the field under prefix (a JSON pointer such as
// "/send_window") that is wrong.
func (w Window) Check(prefix string) error {
	if len(w.Days) == 0 || len(w.Days) > 7 {
		return apperr.Invalidf(prefix+"/days", "days must name one to seven weekdays (mon … sun)")
	}
	seen := map[string]bool{}
	for i, d := range w.Days {
		if _, ok := Weekdays[d]; !ok {
			return apperr.Invalidf(fmt.Sprintf("%s/days/%d", prefix, i), "%q is not a weekday (mon … sun)", d)
		}
		if seen[d] {
			return apperr.Invalidf(fmt.Sprintf("%s/days/%d", prefix, i), "%q is named twice", d)
		}
		seen[d] = true
	}
	if !clock.MatchString(w.Start) {
		return apperr.Invalidf(prefix+"/start", "start must be HH:MM on a 24-hour clock, such as 09:00")
	}
	if !clock.MatchString(w.End) {
		return apperr.Invalidf(prefix+"/end", "end must be HH:MM on a 24-hour clock, such as 17:00")
	}
	if w.Start == w.End {
		return apperr.Invalidf(prefix+"/end", "end must differ from start (a window of no time never opens; leave send_window out to send at any hour)")
	}
	if w.TimeZone != "" && !ValidZone(w.TimeZone) {
		return apperr.Invalidf(prefix+"/time_zone", "%q is not an IANA time zone", w.TimeZone)
	}
	return nil
}

// Parse reads a stored window (nil or empty: none).
func Parse(raw []byte) (*Window, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var w Window
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	return &w, nil
}

// Schedule is a window bound to its zone, ready to ask.
type Schedule struct {
	days       [7]bool
	start, end int // minutes after midnight
	loc        *time.Location
}

// Bind resolves w's zone (its own, else fallback, else UTC) for Open and Next.
func (w Window) Bind(fallback string) Schedule {
	s := Schedule{start: minutes(w.Start), end: minutes(w.End), loc: time.UTC}
	for _, z := range []string{w.TimeZone, fallback} {
		if ValidZone(z) {
			s.loc, _ = time.LoadLocation(z)
			break
		}
	}
	for _, d := range w.Days {
		if wd, ok := Weekdays[d]; ok {
			s.days[wd] = true
		}
	}
	return s
}

func minutes(hhmm string) int {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		return 0
	}
	return t.Hour()*60 + t.Minute()
}

// Open reports whether t falls inside the window. A window running overnight
// (end before start) belongs to the day it opens: fri 22:00–06:00 is open from
// Friday 22:00 to Saturday 06:00.
func (s Schedule) Open(t time.Time) bool {
	l := t.In(s.loc)
	m := l.Hour()*60 + l.Minute()
	day := l.Weekday()
	if s.start < s.end {
		return s.days[day] && m >= s.start && m < s.end
	}
	return (s.days[day] && m >= s.start) || (s.days[(day+6)%7] && m < s.end)
}

// Next is the first instant at or after t at which the window is open: t itself
// when it is, else the next opening. An opening at a wall time that does not
// exist that day (spring forward) is at the instant the clocks jump past it; one
// that occurs twice (fall back) at one of its occurrences.
func (s Schedule) Next(t time.Time) time.Time {
	if s.Open(t) {
		return t
	}
	l := t.In(s.loc)
	for i := 0; i <= 8; i++ {
		d := l.AddDate(0, 0, i)
		if !s.days[d.Weekday()] {
			continue
		}
		o := time.Date(d.Year(), d.Month(), d.Day(), s.start/60, s.start%60, 0, 0, s.loc)
		if !o.After(t) {
			continue
		}
		// In a spring-forward gap time.Date answers an instant on one side of the
		// jump (which one is not promised): walk to the jump, where the wall clock
		// first shows start or later.
		for k := 0; k < 180 && !s.Open(o); k++ {
			o = o.Add(time.Minute)
		}
		for k := 0; k < 180 && o.Add(-time.Minute).After(t) && s.Open(o.Add(-time.Minute)); k++ {
			o = o.Add(-time.Minute)
		}
		return o
	}
	return t.Add(7 * 24 * time.Hour) // unreachable: one day of seven is named
}
