package bounce

import "github.com/sendonce/sendonce/internal/testsignal"

// SetAfterApply makes each reading call f after a message is applied and before
// its batch is deleted; an error from f ends the reading there, as a crash would.
func (s *Service) SetAfterApply(f func(uid uint32) error) {
	if f == nil {
		s.afterApply.Store(nil)
		return
	}
	s.afterApply.Store(&f)
}

// ErrStop is what a test's afterApply returns to stop a poll.
var ErrStop = errStop

// InitSignals readies the reader's test signals (before Run) and returns them:
// each reading recorded, and each IDLE issued (the account id).
func (s *Service) InitSignals() (read *testsignal.Signal[Reading], idling *testsignal.Signal[int64]) {
	s.signals.read.Init()
	s.signals.idling.Init()
	return &s.signals.read, &s.signals.idling
}
