package event

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Events returns up to limit of the account's events after position after, in
// reading order, of the given types (none: all). Events whose transaction may
// still be running are held back until it ends, so a caller that resumes from the
// last position it got never misses one that committed late.
//
// A filtered read that comes back short has read every event up to the horizon it
// took first (StreamEvents); the service remembers that, per account, filter and
// position the caller will resume from (the one it gave, after an empty page, or
// the last event's), and the next read of the same starts there: a poller waiting
// for a rare type reads what is new since its last poll, not every event since its
// last match. The memory is this process's and bounded; without it (another
// replica, an entry evicted) a read starts from the caller's position, as before.
func (s *Service) Events(ctx context.Context, accountID int64, after Position, types []string, limit int) ([]Event, error) {
	if len(types) == 0 {
		return s.events(ctx, accountID, Authority{}, after, types, limit)
	}
	if err := CheckTypes(types); err != nil {
		return nil, err
	}
	key := passKey{account: accountID, after: after, types: typesKey(types)}
	evs, next, err := s.StreamEvents(ctx, accountID, Authority{}, s.passed.from(key), types, limit)
	if err != nil {
		return nil, err
	}
	if len(evs) > 0 {
		key.after = evs[len(evs)-1].Position
	}
	if key.after.Before(next) {
		s.passed.remember(key, next)
	}
	return evs, nil
}

// passedOver is what filtered pulls passed over: for an account, a filter and a
// position a caller resumes from, how far past it every event has been read and
// none matched. At most maxPassedOver entries; a full map forgets one at random.
type passedOver struct {
	mu sync.Mutex
	m  map[passKey]Position
}

type passKey struct {
	account int64
	after   Position
	types   string // sorted, without repeats
}

const maxPassedOver = 10_000

// from is where a read for k starts: past what an earlier one passed over, or k's
// own position.
func (p *passedOver) from(k passKey) Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.m[k]; ok && k.after.Before(at) {
		return at
	}
	return k.after
}

func (p *passedOver) remember(k passKey, at Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[passKey]Position{}
	}
	if _, ok := p.m[k]; !ok && len(p.m) >= maxPassedOver {
		for old := range p.m {
			delete(p.m, old)
			break
		}
	}
	if prev, ok := p.m[k]; !ok || prev.Before(at) {
		p.m[k] = at
	}
}

func typesKey(types []string) string {
	t := slices.Clone(types)
	slices.Sort(t)
	return strings.Join(slices.Compact(t), ",")
}

// Authority is what a stream was opened under: an API key, a dashboard session,
// both (a token minted by a session signed in with a key) or neither (0).
type Authority struct {
	KeyID, SessionID int64
}

// StreamEvents is Events for a stream opened under auth: it returns only events
// that committed before the key's revocation (or the session's sign-out), nothing
// once that is visible, so a stream never sends one committed after it. It also
// returns where the stream reads next: after the last event returned, or, when a
// type filter left the page short, after everything it passed over (the horizon
// read before the events, below which every transaction has ended and each event
// past after was read), so a stream of rare types does not read the account's
// other events again at every poll.
func (s *Service) StreamEvents(ctx context.Context, accountID int64, auth Authority, after Position, types []string, limit int) ([]Event, Position, error) {
	var head Position
	if len(types) > 0 {
		var err error
		if head, err = s.Head(ctx); err != nil {
			return nil, after, err
		}
	}
	evs, err := s.events(ctx, accountID, auth, after, types, limit)
	if err != nil {
		return nil, after, err
	}
	next := after
	if len(evs) > 0 {
		next = evs[len(evs)-1].Position
	}
	if len(types) > 0 && len(evs) < limit && next.Before(head) {
		next = head
	}
	return evs, next, nil
}

func (s *Service) events(ctx context.Context, accountID int64, auth Authority, after Position, types []string, limit int) ([]Event, error) {
	if err := CheckTypes(types); err != nil {
		return nil, err
	}
	if types == nil {
		types = []string{}
	}
	rows, err := store.New(s.pool).EventListAfter(ctx, store.EventListAfterParams{AccountID: accountID,
		AfterXid: after.Xid, AfterID: after.ID, Types: types, ApiKeyID: nonZero(auth.KeyID),
		SessionID: nonZero(auth.SessionID), Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(rows))
	for _, r := range rows {
		out = append(out, Event{ID: EventID(r.ID), Type: r.Type, Timestamp: r.OccurredAt.UTC(), Data: r.Data,
			Position: Position{Xid: r.Xid, ID: r.ID}})
	}
	return out, nil
}

// Newest returns the account's newest limit events that any reader can see (below
// the horizon), newest first, optionally of some types only.
func (s *Service) Newest(ctx context.Context, accountID int64, types []string, limit int) ([]Event, error) {
	if err := CheckTypes(types); err != nil {
		return nil, err
	}
	if types == nil {
		types = []string{}
	}
	rows, err := store.New(s.pool).EventListNewest(ctx, store.EventListNewestParams{AccountID: accountID, Types: types, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(rows))
	for _, r := range rows {
		out = append(out, Event{ID: EventID(r.ID), Type: r.Type, Timestamp: r.OccurredAt.UTC(), Data: r.Data,
			Position: Position{Xid: r.Xid, ID: r.ID}})
	}
	return out, nil
}

// CheckTypes validates a ?type= filter.
func CheckTypes(types []string) error {
	if len(types) > 2*len(Types) {
		return apperr.Invalidf("/type", "at most %d types", 2*len(Types))
	}
	for i, t := range types {
		if !ValidType(t) {
			return apperr.Invalidf("/type/"+itoa(int64(i)), "unknown event type %q", t)
		}
	}
	return nil
}

// Head is the reading position of "from now on": every event that commits later
// comes after it, including those of transactions running at this moment.
func (s *Service) Head(ctx context.Context) (Position, error) {
	xid, err := store.New(s.pool).EventHorizon(ctx)
	return Position{Xid: xid - 1, ID: math.MaxInt64}, err
}

// StreamTokenTTL is how long a stream token can open a stream.
const StreamTokenTTL = 10 * time.Minute

// StreamToken makes a short-lived token that authorises the account's event stream,
// and nothing else, as a query parameter (EventSource cannot send headers). Only its
// hash is stored, with what minted it (auth): revoking the key, or signing the
// session out, revokes the token and ends the streams it opened.
func (s *Service) StreamToken(ctx context.Context, accountID int64, auth Authority) (string, time.Time, error) {
	token := "est_" + rand.Text()
	h := sha256.Sum256([]byte(token))
	exp := s.Now().Add(StreamTokenTTL)
	err := store.New(s.pool).EventStreamTokenCreate(ctx, store.EventStreamTokenCreateParams{
		TokenSha256: h[:], AccountID: accountID, ApiKeyID: nonZero(auth.KeyID), SessionID: nonZero(auth.SessionID),
		ExpiresAt: exp})
	return token, exp, err
}

// StreamTokenAccount returns the account of a valid stream token (unexpired, its
// key not revoked, its session not ended) and what minted it (none for a token
// from before keys were recorded).
func (s *Service) StreamTokenAccount(ctx context.Context, token string) (int64, Authority, error) {
	h := sha256.Sum256([]byte(token))
	now := s.Now()
	row, err := store.New(s.pool).EventStreamTokenAccount(ctx, store.EventStreamTokenAccountParams{TokenSha256: h[:], Now: &now})
	if postgres.NoRows(err) {
		return 0, Authority{}, apperr.New(apperr.Unauthorized,
			"the stream token is unknown, expired, its API key revoked or its session ended; create another")
	}
	if err != nil {
		return 0, Authority{}, err
	}
	var auth Authority
	if row.ApiKeyID != nil {
		auth.KeyID = *row.ApiKeyID
	}
	if row.SessionID != nil {
		auth.SessionID = *row.SessionID
	}
	return row.AccountID, auth, nil
}

// nonZero is id as a nullable parameter: 0 is none.
func nonZero(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// CampaignEvents returns up to limit of a campaign's lifecycle events (campaign.*),
// newest first. The caller checks that the campaign is the account's.
func (s *Service) CampaignEvents(ctx context.Context, accountID, campaignID int64, limit int) ([]Event, error) {
	rows, err := store.New(s.pool).EventListOfCampaign(ctx, store.EventListOfCampaignParams{AccountID: accountID,
		CampaignID: campaignID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Event, 0, len(rows))
	for _, r := range rows {
		out = append(out, Event{ID: EventID(r.ID), Type: r.Type, Timestamp: r.OccurredAt.UTC(), Data: r.Data})
	}
	return out, nil
}
