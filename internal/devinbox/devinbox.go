// Package devinbox shows each account the messages the development log provider
// "sent" for it: the provider keeps them for the whole process, and this package
// decides, from each message's job id, which account it belongs to.
package devinbox

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/provider"
	"github.com/sendonce/sendonce/internal/store"
)

// Service reads an inbox for one account at a time.
type Service struct {
	pool  *pgxpool.Pool
	inbox *provider.Inbox
}

// Size is how many messages the log provider keeps for the dev inbox.
const Size = 200

// OverLog returns the dev inbox of the log provider lp: it keeps the last Size
// messages from now on.
func OverLog(pool *pgxpool.Pool, lp *provider.Log) *Service {
	return New(pool, lp.KeepLast(Size))
}

// New returns a Service over inbox.
func New(pool *pgxpool.Pool, inbox *provider.Inbox) *Service {
	return &Service{pool: pool, inbox: inbox}
}

// owner reads a job id: a transactional message (`message:<account>:<key>`) and
// the service's own mail (`system:<account>:<kind>:<n>`) name their account; a campaign message (`campaign:<campaign>:<subscriber>`) and a test
// send (`test:<campaign>:…`) name their campaign, and a sequence step
// (`sequence:<sequence>:<step>:<subscriber>[:<run>]`) its sequence, whose account
// the database knows.
func owner(jobID string) (o ref) {
	kind, rest, _ := strings.Cut(jobID, ":")
	first, _, _ := strings.Cut(rest, ":")
	n, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return ref{}
	}
	switch kind {
	case "message", "system": // system: the service's own mail about an account (invitations, sign-in links)
		return ref{account: n}
	case "campaign", "test":
		return ref{campaign: n}
	case "sequence":
		return ref{sequence: n}
	}
	return ref{}
}

// ref is what a job id names: an account, a campaign or a sequence (one of them).
type ref struct{ account, campaign, sequence int64 }

// owned tells which of the campaigns and sequences the messages name are the account's.
func (s *Service) owned(ctx context.Context, accountID int64, msgs []provider.Logged) (campaigns, sequences map[int64]bool, err error) {
	var cs, ss []int64
	for _, m := range msgs {
		o := owner(m.JobID)
		if o.campaign != 0 {
			cs = append(cs, o.campaign)
		}
		if o.sequence != 0 {
			ss = append(ss, o.sequence)
		}
	}
	campaigns, sequences = map[int64]bool{}, map[int64]bool{}
	q := store.New(s.pool)
	if len(cs) > 0 {
		ids, err := q.DevInboxCampaigns(ctx, store.DevInboxCampaignsParams{AccountID: accountID, Ids: cs})
		if err != nil {
			return nil, nil, err
		}
		for _, id := range ids {
			campaigns[id] = true
		}
	}
	if len(ss) > 0 {
		ids, err := q.DevInboxSequences(ctx, store.DevInboxSequencesParams{AccountID: accountID, Ids: ss})
		if err != nil {
			return nil, nil, err
		}
		for _, id := range ids {
			sequences[id] = true
		}
	}
	return campaigns, sequences, nil
}

// List returns the account's kept messages, newest first.
func (s *Service) List(ctx context.Context, accountID int64) ([]provider.Logged, error) {
	all := s.inbox.List(func(provider.Logged) bool { return true })
	campaigns, sequences, err := s.owned(ctx, accountID, all)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, m := range all {
		if o := owner(m.JobID); o.account == accountID && o.account != 0 || campaigns[o.campaign] || sequences[o.sequence] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Get returns one of the account's kept messages; another account's is not found.
func (s *Service) Get(ctx context.Context, accountID, id int64) (provider.Logged, error) {
	if m, ok := s.inbox.Get(id); ok {
		campaigns, sequences, err := s.owned(ctx, accountID, []provider.Logged{m})
		if err != nil {
			return provider.Logged{}, err
		}
		if o := owner(m.JobID); o.account == accountID && o.account != 0 || campaigns[o.campaign] || sequences[o.sequence] {
			return m, nil
		}
	}
	return provider.Logged{}, apperr.New(apperr.NotFound, "message not found (the dev inbox keeps the last 200)")
}

// Forget drops the kept messages to the address (lower case): an erasure of the
// person reaches the process's memory too.
func (s *Service) Forget(emailLower string) int { return s.inbox.Forget(emailLower) }
