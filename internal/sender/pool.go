package sender

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// MaxPoolSenders is how many senders one pool may hold.
const MaxPoolSenders = 10

// Pool is a sender pool: an ordered list of the account's senders (Senders[0] is
// the primary). A campaign naming it sends through its first usable sender and
// fails over to the next (docs/providers.md "Sender pools and failover").
type Pool struct {
	ID        int64
	Name      string
	Senders   []int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// PoolInput creates a pool. Its JSON names are the pointers of the problems.
type PoolInput struct {
	Name    string  `json:"name"`
	Senders []int64 `json:"senders"`
}

// PoolPatch changes a pool; absent fields stay. Senders given replace the list.
type PoolPatch struct {
	Name    *string  `json:"name"`
	Senders *[]int64 `json:"senders"`
}

func validPoolName(name string) error {
	if l := len(strings.TrimSpace(name)); l == 0 || len(name) > 200 {
		return apperr.Invalidf("/name", "name is 1 to 200 characters")
	}
	return nil
}

func validPoolSenders(ids []int64) error {
	if len(ids) < 1 || len(ids) > MaxPoolSenders {
		return apperr.Invalidf("/senders", "a pool holds 1 to %d senders, primary first", MaxPoolSenders)
	}
	seen := map[int64]bool{}
	for i, id := range ids {
		if seen[id] {
			return apperr.Invalidf("/senders/"+itoa(i), "sender %d is already in the pool", id)
		}
		seen[id] = true
	}
	return nil
}

// setMembers replaces the pool's members, refusing (422, naming the entry) an id
// that is not one of the account's senders: another tenant's sender is unknown here.
func setMembers(ctx context.Context, q *store.Queries, accountID, poolID int64, ids []int64) error {
	if err := q.PoolMembersClear(ctx, store.PoolMembersClearParams{AccountID: accountID, PoolID: poolID}); err != nil {
		return err
	}
	n, err := q.PoolMembersSet(ctx, store.PoolMembersSetParams{PoolID: poolID, AccountID: accountID, SenderIds: ids})
	if err != nil {
		return err
	}
	if int(n) == len(ids) {
		return nil
	}
	for i, id := range ids {
		if _, err := q.SenderGet(ctx, store.SenderGetParams{AccountID: accountID, ID: id}); postgres.NoRows(err) {
			return apperr.Invalidf("/senders/"+itoa(i), "sender %d not found", id)
		} else if err != nil {
			return err
		}
	}
	return apperr.Invalidf("/senders", "a sender of the list was not found")
}

// members reads the senders of the given pools, in order.
func members(ctx context.Context, q *store.Queries, accountID int64, ids ...int64) (map[int64][]int64, error) {
	rows, err := q.PoolMembersOf(ctx, store.PoolMembersOfParams{AccountID: accountID, PoolIds: ids})
	if err != nil {
		return nil, err
	}
	out := map[int64][]int64{}
	for _, r := range rows {
		out[r.PoolID] = append(out[r.PoolID], r.SenderID)
	}
	return out, nil
}

func toPool(r store.SenderPool, senders []int64) Pool {
	if senders == nil {
		senders = []int64{}
	}
	return Pool{ID: r.ID, Name: r.Name, Senders: senders, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// CreatePool adds a pool of the account's senders.
func (s *Service) CreatePool(ctx context.Context, accountID int64, in PoolInput) (Pool, error) {
	if err := validPoolName(in.Name); err != nil {
		return Pool{}, err
	}
	if err := validPoolSenders(in.Senders); err != nil {
		return Pool{}, err
	}
	var row store.SenderPool
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		if row, err = q.PoolCreate(ctx, store.PoolCreateParams{AccountID: accountID, Name: in.Name}); err != nil {
			return err
		}
		return setMembers(ctx, q, accountID, row.ID, in.Senders)
	})
	if err != nil {
		return Pool{}, poolError(err)
	}
	return toPool(row, in.Senders), nil
}

// poolError maps a pool statement's error; a second pool of the same name is a
// conflict (409 "sender pool already exists").
func poolError(err error) error { return postgres.Error(err, "sender pool") }

// ListPools returns up to limit pools after id afterID, in id order.
func (s *Service) ListPools(ctx context.Context, accountID, afterID int64, limit int) ([]Pool, error) {
	q := store.New(s.pool)
	rows, err := q.PoolList(ctx, store.PoolListParams{AccountID: accountID, AfterID: afterID, MaxRows: int32(limit)})
	if err != nil {
		return nil, postgres.Error(err, "sender pool")
	}
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	m, err := members(ctx, q, accountID, ids...)
	if err != nil {
		return nil, postgres.Error(err, "sender pool")
	}
	out := make([]Pool, 0, len(rows))
	for _, r := range rows {
		out = append(out, toPool(r, m[r.ID]))
	}
	return out, nil
}

// GetPool returns one pool of the account.
func (s *Service) GetPool(ctx context.Context, accountID, id int64) (Pool, error) {
	q := store.New(s.pool)
	row, err := q.PoolGet(ctx, store.PoolGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Pool{}, postgres.Error(err, "sender pool")
	}
	m, err := members(ctx, q, accountID, id)
	if err != nil {
		return Pool{}, postgres.Error(err, "sender pool")
	}
	return toPool(row, m[id]), nil
}

// UpdatePool renames a pool or replaces its senders. A campaign sending through it
// takes the new order at the executor's next refresh (within a poll); rows
// already claimed keep the route recorded on them.
func (s *Service) UpdatePool(ctx context.Context, accountID, id int64, p PoolPatch) (Pool, error) {
	if p.Name != nil {
		if err := validPoolName(*p.Name); err != nil {
			return Pool{}, err
		}
	}
	if p.Senders != nil {
		if err := validPoolSenders(*p.Senders); err != nil {
			return Pool{}, err
		}
	}
	var out Pool
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		row, err := q.PoolGetForUpdate(ctx, store.PoolGetForUpdateParams{AccountID: accountID, ID: id})
		if err != nil {
			return err
		}
		name := row.Name
		if p.Name != nil {
			name = *p.Name
		}
		if row, err = q.PoolRename(ctx, store.PoolRenameParams{Name: name, AccountID: accountID, ID: id}); err != nil {
			return err
		}
		if p.Senders != nil {
			if err := setMembers(ctx, q, accountID, id, *p.Senders); err != nil {
				return err
			}
		}
		m, err := members(ctx, q, accountID, id)
		out = toPool(row, m[id])
		return err
	})
	if err != nil {
		return Pool{}, poolError(err)
	}
	return out, nil
}

// DeletePool removes a pool no campaign names. The message stream of messages
// that named it is retired first when nothing of it is left to send (as a
// sender's deletion retires the sender's); one still sending keeps the pool.
func (s *Service) DeletePool(ctx context.Context, accountID, id int64) error {
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if _, err := q.PoolGetForUpdate(ctx, store.PoolGetForUpdateParams{AccountID: accountID, ID: id}); err != nil {
			return err
		}
		// Locked first, then judged by a statement of its own (PoolStreamLock).
		if _, err := q.PoolStreamLock(ctx, store.PoolStreamLockParams{AccountID: accountID, ID: id}); err != nil {
			return err
		}
		if err := q.PoolRetireStream(ctx, store.PoolRetireStreamParams{AccountID: accountID, ID: id}); err != nil {
			return err
		}
		inUse, err := q.PoolInUse(ctx, store.PoolInUseParams{AccountID: accountID, ID: id})
		if err != nil {
			return err
		}
		if inUse {
			return apperr.New(apperr.Conflict, "campaigns name this sender pool, or messages that named it are still being sent; point the campaigns at another sender or pool first, or retry when the messages are settled")
		}
		_, err = q.PoolDelete(ctx, store.PoolDeleteParams{AccountID: accountID, ID: id})
		return err
	})
	return postgres.Error(err, "sender pool")
}

// CheckPool refuses (422 naming pointer, the pool_id field) a pool named together
// with a sender, and a pool that is not one of the account's (another tenant's is
// unknown here). A campaign, a message and a sequence's send step name a pool by
// the same rule; nil (or 0) names none.
func CheckPool(ctx context.Context, q *store.Queries, accountID int64, senderID, poolID *int64, pointer string) error {
	if poolID == nil || *poolID == 0 {
		return nil
	}
	if senderID != nil && *senderID != 0 {
		return apperr.Invalidf(pointer, "name a sender or a sender pool, not both")
	}
	if _, err := q.PoolGet(ctx, store.PoolGetParams{AccountID: accountID, ID: *poolID}); err != nil {
		if postgres.NoRows(err) {
			return apperr.Invalidf(pointer, "sender pool %d not found", *poolID)
		}
		return err
	}
	return nil
}

// CheckPoolFrom refuses a From that a sender of pool poolID does not allow (422
// naming pointer): what goes through a pool may leave through any of its
// senders, so it is held to the rules of every one (AllowsFrom). Campaigns are
// held to it at approval, messages when accepted.
func CheckPoolFrom(ctx context.Context, q *store.Queries, accountID, poolID int64, from, pointer string) error {
	rules, err := q.CampaignPoolSenderRules(ctx, store.CampaignPoolSenderRulesParams{AccountID: accountID, PoolID: poolID})
	if err != nil {
		return err
	}
	for _, r := range rules {
		if !AllowsFrom(r.AllowedFrom, from) {
			return apperr.Invalidf(pointer, "sender %d of the sender pool does not allow sending from %s (allowed: %s)",
				r.ID, from, strings.Join(r.AllowedFrom, ", "))
		}
	}
	return nil
}

// PoolMember is one sender of a pool as the executor routes it.
type PoolMember struct {
	SenderID int64
	// Held: paused after repeated auth/config failures, or its complaint guard tripped.
	Held bool
}

// Pool returns the senders of the account's pool id in order, each with whether
// it is held, for the executor's route choice.
func (r *Router) Pool(ctx context.Context, accountID, id int64) ([]PoolMember, error) {
	rows, err := store.New(r.svc.pool).PoolRoute(ctx, store.PoolRouteParams{AccountID: accountID, PoolID: id})
	if err != nil {
		return nil, postgres.Error(err, "sender pool")
	}
	out := make([]PoolMember, 0, len(rows))
	for _, m := range rows {
		out = append(out, PoolMember{SenderID: m.SenderID, Held: m.Held})
	}
	return out, nil
}
