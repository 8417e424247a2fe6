package campaign

import "github.com/sendonce/sendonce/internal/testsignal"

// StatsRefreshed is s's moment "a background recount of a campaign's counts
// ended" (its id), for the tests of package campaign_test.
func StatsRefreshed(s *Service) *testsignal.Signal[int64] { return &s.stats.refreshed }
