package event

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Service manages an account's endpoints and reads its events.
type Service struct {
	pool  *pgxpool.Pool
	guard Guard
	// Now is the clock; default time.Now.
	Now func() time.Time
	// MaxEndpoints is how many endpoints one account may have (every event fans
	// out to each of them); default DefaultMaxEndpoints.
	MaxEndpoints int
	// passed: what filtered pulls passed over (Events).
	passed passedOver
}

// DefaultMaxEndpoints is the default of Service.MaxEndpoints.
const DefaultMaxEndpoints = 20

// NewService returns a Service on pool that checks endpoint URLs with guard.
func NewService(pool *pgxpool.Pool, guard Guard) *Service {
	return &Service{pool: pool, guard: guard, Now: time.Now, MaxEndpoints: DefaultMaxEndpoints}
}

// Endpoint is a receiver of the account's events, without its secret.
type Endpoint struct {
	ID          int64
	URL         string
	Description string
	// EventTypes is what the endpoint receives; empty means every type.
	EventTypes []string
	Enabled    bool
	// DisabledReason says why an endpoint was disabled (by the account, a 410, or days of failures).
	DisabledReason *string
	// BatchSize > 1 posts per-recipient (send.*) events that many at a time.
	BatchSize    int
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// EndpointInput creates (every field) or updates (the fields present) an endpoint.
type EndpointInput struct {
	URL         *string
	Description *string
	EventTypes  *[]string
	Enabled     *bool
	BatchSize   *int
}

func (s *Service) check(in EndpointInput) (EndpointInput, error) {
	if in.URL != nil {
		u, err := s.guard.checkURL(*in.URL)
		if err != nil {
			return in, err
		}
		in.URL = &u
	}
	if in.Description != nil && len(*in.Description) > 500 {
		return in, apperr.Invalidf("/description", "description is at most 500 characters")
	}
	if in.EventTypes != nil {
		if len(*in.EventTypes) > len(Types) {
			return in, apperr.Invalidf("/event_types", "at most %d event types", len(Types))
		}
		for i, t := range *in.EventTypes {
			if !ValidType(t) {
				return in, apperr.Invalidf("/event_types/"+itoa(int64(i)), "unknown event type %q", t)
			}
		}
	}
	if in.BatchSize != nil && (*in.BatchSize < 1 || *in.BatchSize > MaxBatch) {
		return in, apperr.Invalidf("/batch_size", "batch_size must be between 1 and %d", MaxBatch)
	}
	return in, nil
}

// Create adds an endpoint and returns it with its secret, shown this once. It
// receives the events that commit from now on. An account that has MaxEndpoints
// already gets a conflict: deleting one makes room.
func (s *Service) Create(ctx context.Context, accountID int64, in EndpointInput) (Endpoint, string, error) {
	if in.URL == nil {
		return Endpoint{}, "", apperr.Invalidf("/url", "url is required")
	}
	in, err := s.check(in)
	if err != nil {
		return Endpoint{}, "", err
	}
	p := store.EventEndpointCreateParams{AccountID: accountID, Url: *in.URL, EventTypes: []string{},
		Enabled: true, BatchSize: 1, Secret: newSecret()}
	if in.Description != nil {
		p.Description = *in.Description
	}
	if in.EventTypes != nil {
		p.EventTypes = dedupe(*in.EventTypes)
	}
	if in.Enabled != nil {
		p.Enabled = *in.Enabled
	}
	if in.BatchSize != nil {
		p.BatchSize = int32(*in.BatchSize)
	}
	var row store.EventEndpoint
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if err := q.EventEndpointCreateLock(ctx, accountID); err != nil {
			return err
		}
		n, err := q.EventEndpointCount(ctx, accountID)
		if err != nil {
			return err
		}
		if n >= int64(s.MaxEndpoints) {
			return apperr.New(apperr.Conflict, "the account has %d event endpoints, the most it may have; delete one first", n)
		}
		row, err = q.EventEndpointCreate(ctx, p)
		return err
	})
	if err != nil {
		return Endpoint{}, "", postgres.Error(err, "event endpoint")
	}
	return toEndpoint(row), row.Secret, nil
}

// List returns up to limit endpoints after id afterID.
func (s *Service) List(ctx context.Context, accountID, afterID int64, limit int) ([]Endpoint, error) {
	rows, err := store.New(s.pool).EventEndpointList(ctx, store.EventEndpointListParams{
		AccountID: accountID, AfterID: afterID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, 0, len(rows))
	for _, r := range rows {
		out = append(out, toEndpoint(r))
	}
	return out, nil
}

// Get returns one endpoint of the account.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Endpoint, error) {
	row, err := store.New(s.pool).EventEndpointGet(ctx, store.EventEndpointGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Endpoint{}, postgres.Error(err, "event endpoint")
	}
	return toEndpoint(row), nil
}

// Update changes the fields present. Disabling parks the endpoint's pending
// deliveries; enabling sends them (and whatever committed meanwhile).
func (s *Service) Update(ctx context.Context, accountID, id int64, in EndpointInput) (Endpoint, error) {
	in, err := s.check(in)
	if err != nil {
		return Endpoint{}, err
	}
	p := store.EventEndpointUpdateParams{AccountID: accountID, ID: id, Url: in.URL, Description: in.Description,
		Enabled: in.Enabled}
	if in.EventTypes != nil {
		p.EventTypes = dedupe(*in.EventTypes)
	}
	if in.BatchSize != nil {
		n := int32(*in.BatchSize)
		p.BatchSize = &n
	}
	var row store.EventEndpoint
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		if row, err = q.EventEndpointUpdate(ctx, p); err != nil {
			return err
		}
		if row.Enabled {
			return q.EventDeliveryUnpark(ctx, row.ID)
		}
		return q.EventDeliveryPark(ctx, row.ID)
	})
	if err != nil {
		return Endpoint{}, postgres.Error(err, "event endpoint")
	}
	return toEndpoint(row), nil
}

// Delete removes an endpoint and its delivery log.
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	n, err := store.New(s.pool).EventEndpointDelete(ctx, store.EventEndpointDeleteParams{AccountID: accountID, ID: id})
	if err != nil {
		return err
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "event endpoint not found")
	}
	return nil
}

// DefaultGrace is how long a rotated-out secret keeps signing unless told otherwise.
const DefaultGrace = 24 * time.Hour

// Rotate replaces the secret; the old one keeps signing beside it for grace, so the
// receiver can switch without rejecting a delivery. Returns the new secret.
func (s *Service) Rotate(ctx context.Context, accountID, id int64, grace time.Duration) (Endpoint, string, *time.Time, error) {
	if grace < 0 || grace > 30*24*time.Hour {
		return Endpoint{}, "", nil, apperr.Invalidf("/grace_seconds", "grace_seconds must be between 0 and 2592000")
	}
	q := store.New(s.pool)
	cur, err := q.EventEndpointGet(ctx, store.EventEndpointGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Endpoint{}, "", nil, postgres.Error(err, "event endpoint")
	}
	secret := newSecret()
	expires := s.Now().Add(grace)
	var row store.EventEndpoint
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		row, err = q.EventEndpointRotate(ctx, store.EventEndpointRotateParams{
			Secret: secret, AccountID: accountID, ID: id, CurrentSecret: cur.Secret})
		if postgres.NoRows(err) {
			return apperr.New(apperr.Conflict, "the endpoint was rotated or deleted meanwhile; retry")
		}
		if err != nil || grace == 0 {
			return err
		}
		return q.EventEndpointSecretKeep(ctx, store.EventEndpointSecretKeepParams{
			EndpointID: id, Secret: cur.Secret, ExpiresAt: expires})
	})
	if err != nil {
		return Endpoint{}, "", nil, postgres.Error(err, "event endpoint")
	}
	var exp *time.Time
	if grace > 0 {
		exp = &expires
	}
	return toEndpoint(row), secret, exp, nil
}

// Ping records an endpoint.ping event and a delivery of it to this endpoint only.
// Returns the event id; the outcome shows in the delivery log.
func (s *Service) Ping(ctx context.Context, accountID, id int64) (string, error) {
	var eventID int64
	err := postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		if _, err := q.EventEndpointGet(ctx, store.EventEndpointGetParams{AccountID: accountID, ID: id}); err != nil {
			return err
		}
		var err error
		if eventID, err = emit(ctx, tx, accountID, EndpointPing, map[string]any{"endpoint_id": id}); err != nil {
			return err
		}
		_, err = q.EventDeliveryInsertOne(ctx, store.EventDeliveryInsertOneParams{
			EndpointID: id, AccountID: accountID, EventID: eventID})
		return err
	})
	if err != nil {
		return "", postgres.Error(err, "event endpoint")
	}
	return EventID(eventID), nil
}

// RedeliverEvent queues one more delivery of one event to the endpoint.
func (s *Service) RedeliverEvent(ctx context.Context, accountID, endpointID, eventID int64) error {
	_, err := store.New(s.pool).EventDeliveryInsertOne(ctx, store.EventDeliveryInsertOneParams{
		EndpointID: endpointID, AccountID: accountID, EventID: eventID})
	if postgres.NoRows(err) {
		return apperr.New(apperr.NotFound, "no such event or event endpoint")
	}
	return err
}

// RedeliverSince sends the endpoint every event since t again (and any it had not
// reached yet), through the ordinary fan-out. It reports whether there was any.
func (s *Service) RedeliverSince(ctx context.Context, accountID, endpointID int64, t time.Time) (bool, error) {
	if _, err := s.Get(ctx, accountID, endpointID); err != nil {
		return false, err
	}
	n, err := store.New(s.pool).EventEndpointRewind(ctx, store.EventEndpointRewindParams{
		AccountID: accountID, Since: t, ID: endpointID})
	return n > 0, err
}

// Delivery is one entry of an endpoint's delivery log.
type Delivery struct {
	ID            int64
	EventIDs      []string
	Batch         bool
	Status        string
	Attempts      int
	NextAttemptAt *time.Time
	StatusCode    *int
	Error         *string
	LatencyMS     *int
	LastAttemptAt *time.Time
	DeliveredAt   *time.Time
	CreatedAt     time.Time
}

// Deliveries lists the endpoint's log newest first, before delivery id beforeID (0: from the newest).
func (s *Service) Deliveries(ctx context.Context, accountID, endpointID, beforeID int64, limit int) ([]Delivery, error) {
	if _, err := s.Get(ctx, accountID, endpointID); err != nil {
		return nil, err
	}
	rows, err := store.New(s.pool).EventDeliveryList(ctx, store.EventDeliveryListParams{
		AccountID: accountID, EndpointID: endpointID, BeforeID: beforeID, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]Delivery, 0, len(rows))
	for _, r := range rows {
		d := Delivery{ID: r.ID, Batch: r.Batch, Status: r.Status, Attempts: int(r.Attempts), Error: r.LastError,
			LastAttemptAt: r.LastAttemptAt, DeliveredAt: r.DeliveredAt, CreatedAt: r.CreatedAt}
		for _, id := range r.EventIds {
			d.EventIDs = append(d.EventIDs, EventID(id))
		}
		if r.Status == "pending" && r.NextAttemptAt.Year() < 9000 {
			t := r.NextAttemptAt
			d.NextAttemptAt = &t
		}
		if r.LastStatusCode != nil {
			n := int(*r.LastStatusCode)
			d.StatusCode = &n
		}
		if r.LastLatencyMs != nil {
			n := int(*r.LastLatencyMs)
			d.LatencyMS = &n
		}
		out = append(out, d)
	}
	return out, nil
}

func toEndpoint(r store.EventEndpoint) Endpoint {
	return Endpoint{ID: r.ID, URL: r.Url, Description: r.Description, EventTypes: r.EventTypes,
		Enabled: r.Enabled, DisabledReason: r.DisabledReason, BatchSize: int(r.BatchSize),
		FailingSince: r.FailingSince, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

func dedupe(in []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, t := range in {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
