package httpapi

import (
	"net/http"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/bounce"
)

func toAPIBounceMailbox(m bounce.Mailbox) api.BounceMailbox {
	out := api.BounceMailbox{Host: m.Host, Port: m.Port, Security: api.BounceMailboxSecurity(m.Security),
		Username: m.Username, Folder: m.Folder, Enabled: m.Enabled, LastPollAt: m.LastPollAt, LastError: m.LastError,
		LastConnectedAt: m.LastConnectedAt, Processed: m.Processed}
	if m.Mode != "" {
		mode := api.BounceMailboxMode(m.Mode)
		out.Mode = &mode
	}
	return out
}

// getBounceMailbox answers GET /v1/bounce-mailbox.
func (s *Server) getBounceMailbox(w http.ResponseWriter, r *http.Request) error {
	m, err := s.Bounces.Get(r.Context(), accountID(r))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIBounceMailbox(m))
}

// putBounceMailbox answers PUT /v1/bounce-mailbox.
func (s *Server) putBounceMailbox(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.BounceMailboxInput](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	m, err := s.Bounces.Put(r.Context(), accountID(r), bounce.MailboxInput{Host: in.Host, Port: in.Port,
		Security: unset(in.Security), Username: in.Username, Password: unset(in.Password), Folder: unset(in.Folder),
		Enabled: in.Enabled})
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPIBounceMailbox(m))
}

// deleteBounceMailbox answers DELETE /v1/bounce-mailbox.
func (s *Server) deleteBounceMailbox(w http.ResponseWriter, r *http.Request) error {
	if err := s.Bounces.Delete(r.Context(), accountID(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
