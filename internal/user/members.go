package user

import (
	"context"
	"fmt"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Member is a user's membership of one account.
type Member struct {
	UserID    int64
	Email     string
	Role      string
	TwoFactor bool
	CreatedAt time.Time
}

// Invitation is an invitation not yet accepted.
type Invitation struct {
	ID        int64
	Email     string
	Role      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

var errNoMember = apperr.New(apperr.NotFound, "no such member")

// Invite makes an invitation of email to accountID with role and mails its link.
// The token is in the mail only: the answer never carries it.
func (s *Service) Invite(ctx context.Context, accountID int64, actor Actor, email, role string) (Invitation, error) {
	addr, err := parseEmail("/email", email)
	if err != nil {
		return Invitation{}, err
	}
	if err := checkRole("/role", role); err != nil {
		return Invitation{}, err
	}
	members, owners := actor.may()
	if !members {
		return Invitation{}, errMembers
	}
	if role == RoleOwner && !owners {
		return Invitation{}, errOwners
	}
	token, hash := newToken(invitePrefix)
	now := s.opts.Now()
	inv := Invitation{Email: addr.Email, Role: role, ExpiresAt: now.Add(InvitationTTL)}
	q := store.New(s.pool)
	acct, err := q.AccountGetByID(ctx, accountID)
	if err != nil {
		return Invitation{}, postgres.Error(err, "account")
	}
	row, err := q.InvitationCreate(ctx, store.InvitationCreateParams{AccountID: accountID, Email: addr.Email,
		EmailLower: addr.Lower, Role: role, TokenHash: hash, ExpiresAt: inv.ExpiresAt})
	if err != nil {
		return Invitation{}, postgres.Error(err, "invitation")
	}
	inv.ID, inv.CreatedAt = row.ID, row.CreatedAt
	// The mail goes after the commit (no transaction is held over the network);
	// an invitation whose mail failed is withdrawn, so the caller can simply retry.
	m := s.invitationMail(accountID, inv.ID, addr.Email, acct.Name, role, s.opts.PublicURL+"/app#/invitation/"+token)
	if _, err := s.mail.Send(ctx, m); err != nil {
		_, _ = q.InvitationDelete(context.WithoutCancel(ctx), store.InvitationDeleteParams{AccountID: accountID, ID: inv.ID})
		e := apperr.New(apperr.Unavailable, "the invitation could not be mailed; try again")
		e.Err = err
		return Invitation{}, e
	}
	return inv, nil
}

// Members lists the account's members and its pending invitations.
func (s *Service) Members(ctx context.Context, accountID int64) ([]Member, []Invitation, error) {
	q := store.New(s.pool)
	rows, err := q.MembershipList(ctx, accountID)
	if err != nil {
		return nil, nil, err
	}
	members := make([]Member, len(rows))
	for i, r := range rows {
		members[i] = Member{UserID: r.UserID, Email: r.Email, Role: r.Role, TwoFactor: r.TwoFactor, CreatedAt: r.CreatedAt}
	}
	now := s.opts.Now()
	pending, err := q.InvitationListPending(ctx, store.InvitationListPendingParams{AccountID: accountID, Now: &now})
	if err != nil {
		return nil, nil, err
	}
	invs := make([]Invitation, len(pending))
	for i, p := range pending {
		invs[i] = Invitation{ID: p.ID, Email: p.Email, Role: p.Role, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt}
	}
	return members, invs, nil
}

// RevokeInvitation deletes a pending invitation; its link stops working.
func (s *Service) RevokeInvitation(ctx context.Context, accountID int64, actor Actor, id int64) error {
	if members, _ := actor.may(); !members {
		return errMembers
	}
	n, err := store.New(s.pool).InvitationDelete(ctx, store.InvitationDeleteParams{AccountID: accountID, ID: id})
	if err != nil {
		return err
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "no such pending invitation")
	}
	return nil
}

// SetRole changes a member's role. The member's sessions in the account end at
// once (with their event streams): authority is never held on to after a change.
func (s *Service) SetRole(ctx context.Context, accountID int64, actor Actor, userID int64, role string) (Member, error) {
	if err := checkRole("/role", role); err != nil {
		return Member{}, err
	}
	var m Member
	err := s.inTx(ctx, func(q *store.Queries) error {
		cur, err := s.manageable(ctx, q, accountID, actor, userID)
		if err != nil {
			return err
		}
		if _, owners := actor.may(); role == RoleOwner && !owners {
			return errOwners
		}
		if cur.Role == RoleOwner && role != RoleOwner {
			if err := lastOwner(ctx, q, accountID); err != nil {
				return err
			}
		}
		if _, err := q.MembershipSetRole(ctx, store.MembershipSetRoleParams{Role: role, AccountID: accountID, UserID: userID}); err != nil {
			return err
		}
		if cur.Role != role {
			if _, err := endSessions(ctx, q, store.UserSessionDeleteParams{UserID: &userID, AccountID: &accountID}); err != nil {
				return err
			}
		}
		m = Member{UserID: userID, Email: cur.Email, Role: role}
		return nil
	})
	return m, err
}

// Remove ends a membership and, at once, the member's sessions in the account.
func (s *Service) Remove(ctx context.Context, accountID int64, actor Actor, userID int64) error {
	return s.inTx(ctx, func(q *store.Queries) error {
		cur, err := s.manageable(ctx, q, accountID, actor, userID)
		if err != nil {
			return err
		}
		if cur.Role == RoleOwner {
			if err := lastOwner(ctx, q, accountID); err != nil {
				return err
			}
		}
		if _, err := q.MembershipDelete(ctx, store.MembershipDeleteParams{AccountID: accountID, UserID: userID}); err != nil {
			return err
		}
		_, err = endSessions(ctx, q, store.UserSessionDeleteParams{UserID: &userID, AccountID: &accountID})
		return err
	})
}

// manageable returns the membership actor is about to change: another account's
// member (or nobody) is not found, an owner only an owner may touch.
func (s *Service) manageable(ctx context.Context, q *store.Queries, accountID int64, actor Actor, userID int64) (store.MembershipGetRow, error) {
	members, owners := actor.may()
	if !members {
		return store.MembershipGetRow{}, errMembers
	}
	cur, err := q.MembershipGet(ctx, store.MembershipGetParams{AccountID: accountID, UserID: userID})
	if notFound(err) {
		return cur, errNoMember
	}
	if err != nil {
		return cur, err
	}
	if cur.Role == RoleOwner && !owners {
		return cur, errOwners
	}
	return cur, nil
}

// lastOwner refuses to leave the account without an owner.
func lastOwner(ctx context.Context, q *store.Queries, accountID int64) error {
	n, err := q.MembershipOwners(ctx, accountID)
	if err != nil {
		return err
	}
	if n <= 1 {
		return apperr.New(apperr.Conflict, "an account keeps at least one owner: make another member owner first")
	}
	return nil
}

// AddOwner makes email an owner of accountID (the first user of an account:
// `sendonce account create --owner-email`). It returns the user's id; a user
// already known keeps their password.
func (s *Service) AddOwner(ctx context.Context, accountID int64, email string) (int64, error) {
	addr, err := parseEmail("/email", email)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.inTx(ctx, func(q *store.Queries) error {
		u, err := q.UserUpsert(ctx, store.UserUpsertParams{Email: addr.Email, EmailLower: addr.Lower})
		if err != nil {
			return err
		}
		id = u.ID
		_, err = q.MembershipCreate(ctx, store.MembershipCreateParams{AccountID: accountID, UserID: u.ID, Role: RoleOwner})
		return err
	})
	return id, postgres.Error(err, "account")
}

// TwoFactorRequired reports whether the account requires a second factor of every member.
func (s *Service) TwoFactorRequired(ctx context.Context, accountID int64) (bool, error) {
	v, err := store.New(s.pool).AccountTwoFactorGet(ctx, accountID)
	return v, postgres.Error(err, "account")
}

// RequireTwoFactor sets whether the account requires a second factor of every
// member; a member without one is then sent to enrol before anything else.
func (s *Service) RequireTwoFactor(ctx context.Context, accountID int64, actor Actor, on bool) (bool, error) {
	if members, _ := actor.may(); !members {
		return false, errMembers
	}
	v, err := store.New(s.pool).AccountTwoFactorSet(ctx, store.AccountTwoFactorSetParams{ID: accountID, RequireTwoFactor: on})
	return v, postgres.Error(err, "account")
}

func (s *Service) invitationJob(accountID, id int64) string {
	return fmt.Sprintf("system:%d:invitation:%d", accountID, id)
}
