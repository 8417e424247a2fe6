package sso

import (
	"context"
	"time"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/session"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// FlowTTL is how long a sign-in may stay at the provider.
func (API) FlowTTL() time.Duration { return FlowTTL }

// Get returns the account's settings (Service.Get), with the redirect URI to
// register.
func (a API) Get(ctx context.Context, accountID int64) (api.SSOSettings, error) {
	set, err := a.Service.Get(ctx, accountID)
	if err != nil {
		return api.SSOSettings{}, err
	}
	return toAPISSO(set, a.RedirectURL()), nil
}

// Put saves the account's settings (Service.Put).
func (a API) Put(ctx context.Context, accountID int64, in api.SSOSettingsInput) (api.SSOSettings, error) {
	set, err := a.Service.Put(ctx, accountID, Input{IssuerURL: in.IssuerUrl, ClientID: in.ClientId,
		ClientSecret: in.ClientSecret, AllowedDomains: in.AllowedDomains, DefaultRole: string(in.DefaultRole),
		Enabled: in.Enabled})
	if err != nil {
		return api.SSOSettings{}, err
	}
	return toAPISSO(set, a.RedirectURL()), nil
}

// Finish completes a sign-in (Service.Finish): state, code and providerError are
// the callback query's, cookieState the browser's flow cookie, replacing the
// session token the browser held before.
func (a API) Finish(ctx context.Context, state, code, providerError, cookieState, replacing string) (session.Session, error) {
	return a.Service.Finish(ctx, Callback{State: state, Code: code, Error: providerError,
		CookieState: cookieState, Replacing: replacing})
}

func toAPISSO(s Settings, redirect string) api.SSOSettings {
	return api.SSOSettings{IssuerUrl: s.IssuerURL, ClientId: s.ClientID, ClientSecretSet: true,
		AllowedDomains: s.AllowedDomains, DefaultRole: api.SSOSettingsDefaultRole(s.DefaultRole), Enabled: s.Enabled,
		RedirectUrl: redirect, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}
