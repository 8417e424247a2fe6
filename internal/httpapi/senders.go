package httpapi

import (
	"net/http"
	"slices"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/pacing"
	"github.com/sendonce/sendonce/internal/sender"
)

// nonNil answers an absent list as an empty one: the spec's arrays are never null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// ifSet is a pointer to s, or nil for "": the domain's empty string is the wire's
// absent field.
func ifSet[T ~string](s string) *T {
	if s == "" {
		return nil
	}
	v := T(s)
	return &v
}

// unset is the domain's value of an optional wire field: "" when absent.
func unset[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

func toAPISender(s sender.Sender) api.Sender {
	out := api.Sender{Id: s.ID, Name: s.Name, Type: api.SenderType(s.Type), Settings: toAPISenderSettings(s.Settings),
		CredentialsHint: s.CredentialsHint, RatePerSecond: s.RatePerSecond, MaxConnections: s.MaxConnections,
		AllowedFrom: nonNil(s.AllowedFrom), Default: s.Default, Idempotent: s.Idempotent,
		PausedReason: s.PausedReason, PausedAt: s.PausedAt, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		DomainLimits: toAPIDomainLimits(s.DomainLimits), Warmup: toAPIWarmup(s.Warmup)}
	if d := s.WarmupToday; d != nil {
		out.WarmupToday = &api.SenderWarmupToday{Day: openapi_types.Date{Time: d.Day}, DayNumber: d.DayNumber,
			Cap: d.Cap, Used: d.Used}
	}
	return out
}

func toAPIDomainLimits(in []pacing.DomainLimit) []api.SenderDomainLimit {
	out := make([]api.SenderDomainLimit, len(in))
	for i, l := range in {
		out[i] = api.SenderDomainLimit{Group: ifSet[api.SenderDomainLimitGroup](l.Group), Domain: ifSet[string](l.Domain),
			PerSecond: l.PerSecond}
	}
	return out
}

func toAPIWarmup(w *pacing.Warmup) *api.SenderWarmup {
	if w == nil {
		return nil
	}
	out := &api.SenderWarmup{Preset: ifSet[api.SenderWarmupPreset](w.Preset)}
	out.Start.Time, _ = time.Parse(time.DateOnly, w.Start)
	if len(w.Caps) > 0 {
		caps := slices.Clone(w.Caps)
		out.Caps = &caps
	}
	return out
}

func domainLimits(in *[]api.SenderDomainLimit) []pacing.DomainLimit {
	if in == nil {
		return nil
	}
	out := make([]pacing.DomainLimit, len(*in))
	for i, l := range *in {
		out[i] = pacing.DomainLimit{Group: unset(l.Group), Domain: unset(l.Domain), PerSecond: l.PerSecond}
	}
	return out
}

func warmup(in *api.SenderWarmup) *pacing.Warmup {
	if in == nil {
		return nil
	}
	out := &pacing.Warmup{Preset: unset(in.Preset), Start: in.Start.Format(time.DateOnly)}
	if in.Caps != nil {
		out.Caps = slices.Clone(*in.Caps)
	}
	return out
}

func toAPISenderSettings(s sender.Settings) api.SenderSettings {
	out := api.SenderSettings{Host: ifSet[string](s.Host), Security: ifSet[api.SenderSettingsSecurity](s.Security),
		Username: ifSet[string](s.Username), Url: ifSet[string](s.URL), Endpoint: ifSet[string](s.Endpoint),
		Region: ifSet[string](s.Region), Domain: ifSet[string](s.Domain), MessageStream: ifSet[string](s.MessageStream),
		ConfigurationSet: ifSet[string](s.ConfigurationSet), DkimSign: s.DKIMSign,
		BounceDomain: ifSet[string](s.BounceDomain)}
	if s.Port != 0 {
		out.Port = &s.Port
	}
	return out
}

func senderSettings(in *api.SenderSettings) sender.Settings {
	if in == nil {
		return sender.Settings{}
	}
	out := sender.Settings{Host: unset(in.Host), Security: unset(in.Security), Username: unset(in.Username),
		URL: unset(in.Url), Endpoint: unset(in.Endpoint), Region: unset(in.Region), Domain: unset(in.Domain),
		MessageStream: unset(in.MessageStream), ConfigurationSet: unset(in.ConfigurationSet), DKIMSign: in.DkimSign,
		BounceDomain: unset(in.BounceDomain)}
	if in.Port != nil {
		out.Port = *in.Port
	}
	return out
}

func senderCredentials(in *api.SenderCredentials) *sender.Credentials {
	if in == nil {
		return nil
	}
	return &sender.Credentials{Password: unset(in.Password), Authorization: unset(in.Authorization),
		APIKey: unset(in.ApiKey), ServerToken: unset(in.ServerToken), AccessKeyID: unset(in.AccessKeyId),
		SecretAccessKey: unset(in.SecretAccessKey)}
}

func senderInput(in api.SenderCreate) sender.Input {
	out := sender.Input{Name: in.Name, Type: string(in.Type), Settings: senderSettings(in.Settings),
		Credentials: senderCredentials(in.Credentials)}
	if in.RatePerSecond != nil {
		out.RatePerSecond = *in.RatePerSecond
	}
	if in.MaxConnections != nil {
		out.MaxConnections = *in.MaxConnections
	}
	if in.AllowedFrom != nil {
		out.AllowedFrom = *in.AllowedFrom
	}
	if in.Default != nil {
		out.Default = *in.Default
	}
	out.DomainLimits, out.Warmup = domainLimits(in.DomainLimits), warmup(in.Warmup)
	return out
}

func senderPatch(in api.SenderUpdate) sender.Patch {
	out := sender.Patch{Name: in.Name, Credentials: senderCredentials(in.Credentials), RatePerSecond: in.RatePerSecond,
		MaxConnections: in.MaxConnections, AllowedFrom: in.AllowedFrom, Default: in.Default}
	if in.Settings != nil {
		s := senderSettings(in.Settings)
		out.Settings = &s
	}
	if in.DomainLimits != nil {
		l := domainLimits(in.DomainLimits)
		out.DomainLimits = &l
	}
	out.Warmup, out.ClearWarmup = warmup(in.Warmup), in.ClearWarmup != nil && *in.ClearWarmup
	return out
}

// createSender answers POST /v1/senders. Credentials are accepted and never
// returned: the response carries a masked hint.
func (s *Server) createSender(w http.ResponseWriter, r *http.Request) error {
	in, err := decode[api.SenderCreate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	sn, err := s.Senders.Create(r.Context(), accountID(r), senderInput(in))
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, toAPISender(sn))
}

// listSenders answers GET /v1/senders?limit=&cursor=.
func (s *Server) listSenders(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r, "senders")
	if err != nil {
		return err
	}
	rows, err := s.Senders.List(r.Context(), accountID(r), p.AfterID, p.Limit+1)
	if err != nil {
		return err
	}
	rows, next := pageOf(r, "senders", p, rows, func(x sender.Sender) cursor { return cursor{ID: x.ID} })
	out := api.SenderPage{Data: make([]api.Sender, len(rows)), NextCursor: next}
	for i, x := range rows {
		out.Data[i] = toAPISender(x)
	}
	return encode(w, http.StatusOK, out)
}

// getSender answers GET /v1/senders/{id}.
func (s *Server) getSender(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	sn, err := s.Senders.Get(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISender(sn))
}

// updateSender answers PATCH /v1/senders/{id}.
func (s *Server) updateSender(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	in, err := decode[api.SenderUpdate](w, r, s.opts.MaxBodyBytes)
	if err != nil {
		return err
	}
	sn, err := s.Senders.Update(r.Context(), accountID(r), id, senderPatch(in))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, toAPISender(sn))
}

// deleteSender answers DELETE /v1/senders/{id}.
func (s *Server) deleteSender(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := s.Senders.Delete(r.Context(), accountID(r), id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// verifySender answers POST /v1/senders/{id}/verify: 200 with ok and, when the
// check failed, the step that failed and why.
func (s *Server) verifySender(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	res, err := s.Senders.Verify(r.Context(), accountID(r), id)
	if err != nil {
		return err
	}
	out := api.SenderVerifyResult{Ok: res.OK, Message: res.Message, Step: ifSet[api.SenderVerifyResultStep](res.Step)}
	return encode(w, http.StatusOK, out)
}
