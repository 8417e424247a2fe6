package operator

import (
	"context"

	"github.com/sendonce/sendonce/api"
)

// API is the Service and the operator's Key, in the wire types of api/, as the
// HTTP API calls them.
type API struct {
	*Service
	Key Key
}

// KeyEnabled reports whether an operator key is configured (Key.Enabled).
func (a API) KeyEnabled() bool { return a.Key.Enabled() }

// KeyMatches reports, in constant time, whether token is the operator key (Key.Matches).
func (a API) KeyMatches(token string) bool { return a.Key.Matches(token) }

// WithOrigin returns ctx whose operator actions are recorded as coming from the
// request id and the source address (WithOrigin).
func (API) WithOrigin(ctx context.Context, requestID, sourceAddr string) context.Context {
	return WithOrigin(ctx, Origin{RequestID: requestID, SourceAddr: sourceAddr})
}

// List returns accounts after the id, in id order (Service.List).
func (a API) List(ctx context.Context, after int64, limit int32) ([]api.OperatorAccount, error) {
	rows, err := a.Service.List(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.OperatorAccount, 0, len(rows))
	for _, x := range rows {
		out = append(out, toAPIOperatorAccount(x))
	}
	return out, nil
}

// Create makes an account and its first API key, with the quotas given (none:
// the defaults) (Service.Create).
func (a API) Create(ctx context.Context, name string, quotas *api.Quotas) (api.OperatorAccount, string, error) {
	var q QuotaUpdate
	if quotas != nil {
		q = quotaUpdate(*quotas)
	}
	acc, token, err := a.Service.Create(ctx, name, q)
	if err != nil {
		return api.OperatorAccount{}, "", err
	}
	return toAPIOperatorAccount(acc), token, nil
}

// Get returns an account (Service.Get).
func (a API) Get(ctx context.Context, id int64) (api.OperatorAccount, error) {
	return wire(a.Service.Get(ctx, id))
}

// SetQuotas replaces an account's quotas (Service.SetQuotas).
func (a API) SetQuotas(ctx context.Context, id int64, q api.Quotas) (api.OperatorAccount, error) {
	return wire(a.Service.SetQuotas(ctx, id, quotaUpdate(q)))
}

// Suspend suspends an account (Service.Suspend).
func (a API) Suspend(ctx context.Context, id int64) (api.OperatorAccount, error) {
	return wire(a.Service.Suspend(ctx, id))
}

// Resume resumes a suspended account (Service.Resume).
func (a API) Resume(ctx context.Context, id int64) (api.OperatorAccount, error) {
	return wire(a.Service.Resume(ctx, id))
}

func wire(acc Account, err error) (api.OperatorAccount, error) {
	if err != nil {
		return api.OperatorAccount{}, err
	}
	return toAPIOperatorAccount(acc), nil
}

func toAPIOperatorAccount(a Account) api.OperatorAccount {
	status := api.OperatorAccountStatusActive
	if a.SuspendedAt != nil {
		status = api.OperatorAccountStatusSuspended
	}
	return api.OperatorAccount{Id: a.ID, Name: a.Name, PublicId: a.PublicID, CreatedAt: a.CreatedAt,
		Status: status, SuspendedAt: a.SuspendedAt, Quotas: api.Quotas{Subscribers: a.Quotas.Subscribers,
			Senders: a.Quotas.Senders, MessagesPerDay: a.Quotas.MessagesPerDay}}
}

func quotaUpdate(q api.Quotas) QuotaUpdate {
	return QuotaUpdate{SetSubscribers: true, SetSenders: true, SetMessagesPerDay: true,
		Quotas: Quotas{Subscribers: q.Subscribers, Senders: q.Senders, MessagesPerDay: q.MessagesPerDay}}
}
