package user

import (
	"context"

	"github.com/sendonce/sendonce/internal/store"
)

// EnsureMember finds or makes the user of email (a normalised address) and makes
// them a member of accountID with role unless they are one already: a member
// keeps their role. It is how a person an account's identity provider signed in
// joins the account (internal/sso); created reports a new membership.
func (s *Service) EnsureMember(ctx context.Context, accountID int64, email, role string) (userID int64, created bool, err error) {
	addr, err := parseEmail("/email", email)
	if err != nil {
		return 0, false, err
	}
	if err := checkRole("/default_role", role); err != nil {
		return 0, false, err
	}
	err = s.inTx(ctx, func(q *store.Queries) error {
		u, err := q.UserUpsert(ctx, store.UserUpsertParams{Email: addr.Email, EmailLower: addr.Lower})
		if err != nil {
			return err
		}
		m, err := q.SSOMembershipEnsure(ctx, store.SSOMembershipEnsureParams{AccountID: accountID, UserID: u.ID, Role: role})
		userID, created = u.ID, m.Inserted
		return err
	})
	return userID, created, err
}
