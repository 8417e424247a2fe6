package bounce

// SetAfterApply makes each poll call f after a message is applied and before
// its batch is deleted; an error from f ends the poll there, as a crash would.
func (s *Service) SetAfterApply(f func(uid uint32) error) { s.afterApply = f }

// ErrStop is what a test's afterApply returns to stop a poll.
var ErrStop = errStop
