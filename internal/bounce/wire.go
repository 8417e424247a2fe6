package bounce

import (
	"context"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/optional"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// Get returns the account's mailbox (Service.Get).
func (a API) Get(ctx context.Context, accountID int64) (api.BounceMailbox, error) {
	m, err := a.Service.Get(ctx, accountID)
	if err != nil {
		return api.BounceMailbox{}, err
	}
	return toAPIMailbox(m), nil
}

// Put sets the account's mailbox (Service.Put).
func (a API) Put(ctx context.Context, accountID int64, in api.BounceMailboxInput) (api.BounceMailbox, error) {
	m, err := a.Service.Put(ctx, accountID, MailboxInput{Host: in.Host, Port: in.Port,
		Security: optional.String(in.Security), Username: in.Username, Password: optional.String(in.Password), Folder: optional.String(in.Folder),
		Enabled: in.Enabled})
	if err != nil {
		return api.BounceMailbox{}, err
	}
	return toAPIMailbox(m), nil
}

func toAPIMailbox(m Mailbox) api.BounceMailbox {
	out := api.BounceMailbox{Host: m.Host, Port: m.Port, Security: api.BounceMailboxSecurity(m.Security),
		Username: m.Username, Folder: m.Folder, Enabled: m.Enabled, LastPollAt: m.LastPollAt, LastError: m.LastError,
		LastConnectedAt: m.LastConnectedAt, Processed: m.Processed}
	if m.Mode != "" {
		mode := api.BounceMailboxMode(m.Mode)
		out.Mode = &mode
	}
	return out
}
