package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/account"
)

func toAPIAccount(a account.Account) api.Account {
	return api.Account{Id: a.ID, Name: a.Name, PublicId: a.PublicID, CreatedAt: a.CreatedAt,
		UnsubscribeScope: api.UnsubscribeScope(a.UnsubscribeScope), FourEyes: a.FourEyes, TimeZone: a.TimeZone}
}

// updateAccount changes the account's settings.
func (s *Server) updateAccount(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.AccountUpdate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	var scope *string
	if in.UnsubscribeScope != nil {
		v := string(*in.UnsubscribeScope)
		scope = &v
	}
	a, err := s.Accounts.Update(r.Context(), accountID(r), account.Settings{UnsubscribeScope: scope, FourEyes: in.FourEyes, TimeZone: in.TimeZone})
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIAccount(a))
}
