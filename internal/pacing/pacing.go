// Package pacing says how fast a sender may send to each recipient domain and how
// many messages a day it may send while it warms up: the domain groups (one
// mailbox provider's domains share its receiving servers, so they share a
// budget), a sender's per-group limits, and warm-up schedules. It holds the rules
// and their validation; the executor applies them (internal/executor/pacing.go).
package pacing

import (
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/address"
	"github.com/sendonce/sendonce/internal/apperr"
)

// Group is a set of recipient domains served by one mailbox provider.
type Group struct {
	Name    string
	Domains []string
}

// Groups are the built-in domain groups. A domain in none of them is a group of
// its own, named by the domain. No provider publishes a sending rate per second
// (Gmail, Yahoo and Microsoft publish volume thresholds and spam-rate rules:
// docs/executor.md), so no group has a default limit: a sender sets one, and a
// deferral (421, 4.7.x, a provider's throttling) slows the group it came from.
var Groups = []Group{
	{Name: "gmail", Domains: []string{"gmail.com", "googlemail.com"}},
	{Name: "microsoft", Domains: []string{"outlook.com", "hotmail.com", "live.com", "msn.com", "hotmail.co.uk",
		"hotmail.fr", "outlook.fr", "live.co.uk"}},
	{Name: "yahoo", Domains: []string{"yahoo.com", "aol.com", "ymail.com", "rocketmail.com", "yahoo.co.uk",
		"yahoo.fr"}},
	{Name: "apple", Domains: []string{"icloud.com", "me.com", "mac.com"}},
	{Name: "gmx", Domains: []string{"gmx.com", "gmx.net", "gmx.de", "web.de", "mail.com"}},
}

var groupOf = func() map[string]string {
	m := map[string]string{}
	for _, g := range Groups {
		for _, d := range g.Domains {
			m[d] = g.Name
		}
	}
	return m
}()

// GroupOfDomain is the group a recipient domain is paced in: a built-in group's
// name, else the domain itself (lower case).
func GroupOfDomain(domain string) string {
	domain = strings.ToLower(strings.TrimSuffix(domain, "."))
	if g, ok := groupOf[domain]; ok {
		return g
	}
	return domain
}

// GroupOf is the group of an email address's domain.
func GroupOf(email string) string {
	i := strings.LastIndexByte(email, '@')
	return GroupOfDomain(email[i+1:])
}

// knownGroup reports whether name is a built-in group's name.
func knownGroup(name string) bool {
	for _, g := range Groups {
		if g.Name == name {
			return true
		}
	}
	return false
}

// DomainLimit caps one sender's sends to a group (a built-in group's name) or a
// domain (a domain of a built-in group names its group) per second.
type DomainLimit struct {
	Group     string  `json:"group,omitempty"`
	Domain    string  `json:"domain,omitempty"`
	PerSecond float64 `json:"per_second"`
}

// Key is the group the limit applies to.
func (l DomainLimit) Key() string {
	if l.Group != "" {
		return l.Group
	}
	return GroupOfDomain(l.Domain)
}

// MaxPerSecond bounds a domain limit, as rate_per_second is bounded.
const MaxPerSecond = 100000

// ValidateLimits checks a sender's domain limits; pointer is the field's JSON
// pointer (/domain_limits).
func ValidateLimits(pointer string, limits []DomainLimit) error {
	if len(limits) > 100 {
		return apperr.Invalidf(pointer, "at most 100 domain limits")
	}
	seen := map[string]bool{}
	for i, l := range limits {
		at := pointer + "/" + strconv.Itoa(i)
		switch {
		case (l.Group == "") == (l.Domain == ""):
			return apperr.Invalidf(at, "a domain limit names a group or a domain, not both")
		case l.Group != "" && !knownGroup(l.Group):
			return apperr.Invalidf(at+"/group", "unknown group %q (groups: %s)", l.Group, groupNames())
		case l.Domain != "" && !validDomain(l.Domain):
			return apperr.Invalidf(at+"/domain", "not a domain: %q", l.Domain)
		case !(l.PerSecond > 0) || l.PerSecond > MaxPerSecond:
			return apperr.Invalidf(at+"/per_second", "per_second is above 0 and at most %d", MaxPerSecond)
		}
		k := l.Key()
		if seen[k] {
			return apperr.Invalidf(at, "a second limit for the group %q", k)
		}
		seen[k] = true
	}
	return nil
}

// Limits is a sender's domain limits by group; nil when it has none.
func Limits(limits []DomainLimit) map[string]float64 {
	if len(limits) == 0 {
		return nil
	}
	m := make(map[string]float64, len(limits))
	for _, l := range limits {
		m[l.Key()] = l.PerSecond
	}
	return m
}

func groupNames() string {
	names := make([]string, len(Groups))
	for i, g := range Groups {
		names[i] = g.Name
	}
	return strings.Join(names, ", ")
}

func validDomain(d string) bool {
	if len(d) == 0 || len(d) > 253 || strings.Contains(d, "@") {
		return false
	}
	_, err := address.Parse("x@" + d)
	return err == nil
}

// Warmup is a sender's warm-up schedule: on the n-th UTC day from Start (day 0)
// it may send at most the n-th daily cap; after the last day, no cap. Before
// Start the first day's cap applies.
type Warmup struct {
	// Preset names a built-in curve ("standard"); Caps is a custom one. One of them.
	Preset string `json:"preset,omitempty"`
	Caps   []int  `json:"caps,omitempty"`
	// Start is the schedule's first day, YYYY-MM-DD (UTC).
	Start string `json:"start"`
}

// Presets are the built-in warm-up curves: daily caps roughly doubling for the
// first days, then growing by about half, as the IP warm-up schedules of Amazon
// SES and SendGrid do. Neither publishes one fixed table for every sender: this
// is the shape, not their numbers.
var Presets = map[string][]int{
	"standard": {50, 100, 200, 400, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000, 20000, 30000, 40000,
		50000, 75000, 100000, 150000, 200000, 300000, 400000, 500000},
}

// MaxDays bounds a custom schedule; MaxCap a day's cap.
const (
	MaxDays = 366
	MaxCap  = 10_000_000
)

// ValidateWarmup checks a warm-up schedule (nil: none); pointer is its field
// (/warmup).
func ValidateWarmup(pointer string, w *Warmup) error {
	if w == nil {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, w.Start); err != nil {
		return apperr.Invalidf(pointer+"/start", "start is a date, YYYY-MM-DD")
	}
	switch {
	case (w.Preset == "") == (len(w.Caps) == 0):
		return apperr.Invalidf(pointer, "a warm-up names a preset or lists caps, not both")
	case w.Preset != "" && Presets[w.Preset] == nil:
		return apperr.Invalidf(pointer+"/preset", "unknown preset %q (presets: standard)", w.Preset)
	case len(w.Caps) > MaxDays:
		return apperr.Invalidf(pointer+"/caps", "at most %d days", MaxDays)
	}
	for i, c := range w.Caps {
		if c < 1 || c > MaxCap {
			return apperr.Invalidf(pointer+"/caps/"+strconv.Itoa(i), "a day's cap is between 1 and %d", MaxCap)
		}
	}
	return nil
}

// Schedule is the list of daily caps w follows.
func (w Warmup) Schedule() []int {
	if w.Preset != "" {
		return Presets[w.Preset]
	}
	return w.Caps
}

// Day is the UTC day t falls on, at midnight.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// CapOn is the cap of the UTC day of t and the schedule's day number (from 0);
// ok false once the schedule is over (no cap).
func (w Warmup) CapOn(t time.Time) (limit int, day int, ok bool) {
	start, err := time.Parse(time.DateOnly, w.Start)
	caps := w.Schedule()
	if err != nil || len(caps) == 0 {
		return 0, 0, false
	}
	day = max(0, int(Day(t).Sub(start)/(24*time.Hour)))
	if day >= len(caps) {
		return 0, day, false
	}
	return caps[day], day, true
}
