// Package abtest holds the rules of a campaign's A/B test that do not depend on
// where they run: the variants' names, the limits of the settings, which variant
// leads by a metric, and how sure that lead is (a two-proportion z-test). The
// executor picks the winner with them; the API reports them.
package abtest

import (
	"math"
)

// Modes, metrics and limits of an A/B test (docs/ab-tests.md).
const (
	ModeSplit = "split" // every recipient gets one variant
	ModeTest  = "test"  // a test group first, then the winner to the rest

	MetricClicks = "clicks" // recipients who clicked a tracked link, people only
	MetricOpens  = "opens"  // recipients who opened, people only (unreliable: privacy proxies)
	MetricManual = "manual" // a person chooses

	MinVariants    = 2
	MaxVariants    = 5
	MinTestPercent = 1
	MaxTestPercent = 50
	MinWaitSeconds = 60         // a minute
	MaxWaitSeconds = 30 * 86400 // thirty days
)

// Name is the letter of variant idx (1 is "A").
func Name(idx int16) string {
	if idx < 1 || idx > MaxVariants {
		return ""
	}
	return string(rune('A' + idx - 1))
}

// Index is the idx of a variant letter, 0 when it names none.
func Index(name string) int16 {
	if len(name) != 1 || name[0] < 'A' || name[0] >= 'A'+MaxVariants {
		return 0
	}
	return int16(name[0]-'A') + 1
}

// Stats are one variant's counts: rows sent, and recipients who opened or
// clicked as people.
type Stats struct {
	Variant               int16
	Sent, Opened, Clicked int64
}

// Hits is the count the metric ranks by.
func (s Stats) Hits(metric string) int64 {
	if metric == MetricOpens {
		return s.Opened
	}
	return s.Clicked
}

// Rate is hits per message sent (0 when none was sent).
func (s Stats) Rate(metric string) float64 {
	if s.Sent == 0 {
		return 0
	}
	return float64(s.Hits(metric)) / float64(s.Sent)
}

// Leader is the variant with the highest rate by metric; a tie goes to the
// lower variant, so every replica that reads the same counts picks the same. With
// no stats it is variant 1.
func Leader(stats []Stats, metric string) int16 {
	best := -1
	for i, s := range stats {
		if best < 0 || s.Rate(metric) > stats[best].Rate(metric) ||
			(s.Rate(metric) == stats[best].Rate(metric) && s.Variant < stats[best].Variant) {
			best = i
		}
	}
	if best < 0 {
		return 1
	}
	return stats[best].Variant
}

// PValue is the two-sided p-value of a two-proportion z-test of x1 of n1 against
// x2 of n2 (pooled standard error): the chance of a difference at least this large
// if both variants were equally good. 1 when it cannot be computed (no sends, or
// no variation at all). A hint only: a normal approximation, poor for small counts.
func PValue(x1, n1, x2, n2 int64) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	p := float64(x1+x2) / float64(n1+n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return 1
	}
	z := math.Abs(p1-p2) / se
	return math.Erfc(z / math.Sqrt2)
}
