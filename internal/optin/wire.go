package optin

import (
	"context"
	"errors"
)

// API is the Service as the HTTP API calls it: a sign-up's answer as values, the
// public pages as their HTML.
type API struct{ *Service }

// Signup signs an address up to lists of the form publicID names (Service.Signup):
// whether a list asks for confirmation, and the first list's language.
func (a API) Signup(ctx context.Context, publicID, email, name string, listIDs []int64) (confirm bool, language string, err error) {
	res, err := a.Service.Signup(ctx, publicID, Request{Email: email, Name: name, ListIDs: listIDs})
	return res.Confirm, res.Language, err
}

// ThanksPage answers a sign-up posted from an HTML form.
func (API) ThanksPage(confirm bool, language string) []byte {
	return ThanksPage(Result{Confirm: confirm, Language: language})
}

// ErrorPage answers a form sign-up that was refused, with the reason.
func (API) ErrorPage(detail string) []byte { return ErrorPage(detail) }

// ConfirmPage is the page a confirmation link opens (Service.Lookup).
func (a API) ConfirmPage(ctx context.Context, token string) ([]byte, error) {
	p, err := a.Service.Lookup(ctx, token)
	if err != nil {
		return nil, err
	}
	return ConfirmPage(p), nil
}

// Confirm confirms the address the link names and is the page saying so
// (Service.Confirm).
func (a API) Confirm(ctx context.Context, token string) ([]byte, error) {
	p, err := a.Service.Confirm(ctx, token)
	if err != nil {
		return nil, err
	}
	return ConfirmedPage(p), nil
}

// InvalidLink tells whether err is ErrInvalidLink: a forged, altered or expired
// token.
func (API) InvalidLink(err error) bool { return errors.Is(err, ErrInvalidLink) }

// InvalidLinkPage answers a confirmation link that is not valid.
func (API) InvalidLinkPage() []byte { return InvalidLinkPage() }
