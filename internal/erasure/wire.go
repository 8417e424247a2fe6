package erasure

import (
	"context"
	"errors"

	"github.com/sendonce/sendonce/api"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// EraseSubscriber erases a subscriber and what is kept about its address
// (Service.EraseSubscriber).
func (a API) EraseSubscriber(ctx context.Context, accountID, subscriberID int64, requestedBy string) (api.Erasure, error) {
	return wire(a.Service.EraseSubscriber(ctx, accountID, subscriberID, requestedBy))
}

// EraseAddress erases what is kept about an address (Service.EraseAddress).
func (a API) EraseAddress(ctx context.Context, accountID int64, email, requestedBy string) (api.Erasure, error) {
	return wire(a.Service.EraseAddress(ctx, accountID, email, requestedBy))
}

// InFlight tells whether err is ErrInFlight: a send to the person is in a
// provider's hands, and a retry in a minute finishes the erasure.
func (API) InFlight(err error) bool { return errors.Is(err, ErrInFlight) }

func wire(e Result, err error) (api.Erasure, error) {
	if err != nil {
		return api.Erasure{}, err
	}
	return toAPIErasure(e), nil
}

func toAPIErasure(e Result) api.Erasure {
	return api.Erasure{Id: e.ID, SubscriberId: e.SubscriberID, Status: api.ErasureStatus(e.Status),
		RequestedBy: e.RequestedBy, Counts: e.Counts, CreatedAt: e.CreatedAt, CompletedAt: e.CompletedAt}
}
