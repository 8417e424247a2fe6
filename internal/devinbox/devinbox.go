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

// New returns a Service over inbox.
func New(pool *pgxpool.Pool, inbox *provider.Inbox) *Service {
	return &Service{pool: pool, inbox: inbox}
}

// owner reads a job id: a transactional message (`message:<account>:<key>`) and
// the service's own mail (`system:<account>:<kind>:<n>`) name their account; a campaign message (`campaign:<campaign>:<subscriber>`) and a test
// send (`test:<campaign>:…`) name their campaign, whose account the database knows.
func owner(jobID string) (accountID, campaignID int64) {
	kind, rest, _ := strings.Cut(jobID, ":")
	first, _, _ := strings.Cut(rest, ":")
	n, err := strconv.ParseInt(first, 10, 64)
	if err != nil {
		return 0, 0
	}
	switch kind {
	case "message", "system": // system: the service's own mail about an account (invitations, sign-in links)
		return n, 0
	case "campaign", "test":
		return 0, n
	}
	return 0, 0
}

// List returns the account's kept messages, newest first.
func (s *Service) List(ctx context.Context, accountID int64) ([]provider.Logged, error) {
	all := s.inbox.List(func(provider.Logged) bool { return true })
	var campaigns []int64
	for _, m := range all {
		if _, c := owner(m.JobID); c != 0 {
			campaigns = append(campaigns, c)
		}
	}
	mine := map[int64]bool{}
	if len(campaigns) > 0 {
		ids, err := store.New(s.pool).DevInboxCampaigns(ctx, store.DevInboxCampaignsParams{AccountID: accountID, Ids: campaigns})
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			mine[id] = true
		}
	}
	out := all[:0]
	for _, m := range all {
		if a, c := owner(m.JobID); a == accountID || c != 0 && mine[c] {
			out = append(out, m)
		}
	}
	return out, nil
}

// Get returns one of the account's kept messages; another account's is not found.
func (s *Service) Get(ctx context.Context, accountID, id int64) (provider.Logged, error) {
	m, ok := s.inbox.Get(id)
	if ok {
		a, c := owner(m.JobID)
		if a == accountID {
			return m, nil
		}
		if c != 0 {
			ids, err := store.New(s.pool).DevInboxCampaigns(ctx, store.DevInboxCampaignsParams{AccountID: accountID, Ids: []int64{c}})
			if err != nil {
				return provider.Logged{}, err
			}
			if len(ids) == 1 {
				return m, nil
			}
		}
	}
	return provider.Logged{}, apperr.New(apperr.NotFound, "message not found (the dev inbox keeps the last 200)")
}
