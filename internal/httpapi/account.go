package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/account"
)

func toAPIAccount(a account.Account) api.Account {
	return api.Account{Id: a.ID, Name: a.Name, PublicId: a.PublicID, CreatedAt: a.CreatedAt, UnsubscribeScope: api.UnsubscribeScope(a.UnsubscribeScope)}
}

// updateAccount changes the account's settings.
func (s *Server) updateAccount(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.AccountUpdate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	a, err := s.Accounts.SetUnsubscribeScope(r.Context(), accountID(r), string(in.UnsubscribeScope))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIAccount(a))
}
