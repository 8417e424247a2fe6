package sender

import (
	"context"
	"slices"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/sendonce/sendonce/api"
	"github.com/sendonce/sendonce/internal/optional"
	"github.com/sendonce/sendonce/internal/pacing"
)

// API is the Service in the wire types of api/, as the HTTP API calls it.
type API struct{ *Service }

// Create adds a sender (Service.Create). Credentials are accepted and never
// returned: the answer carries a masked hint.
func (a API) Create(ctx context.Context, accountID int64, in api.SenderCreate) (api.Sender, error) {
	return wire(a.Service.Create(ctx, accountID, senderInput(in)))
}

// List returns a page of the account's senders (Service.List).
func (a API) List(ctx context.Context, accountID, afterID int64, limit int) ([]api.Sender, error) {
	rows, err := a.Service.List(ctx, accountID, afterID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.Sender, len(rows))
	for i, x := range rows {
		out[i] = toAPISender(x)
	}
	return out, nil
}

// Get returns one sender (Service.Get).
func (a API) Get(ctx context.Context, accountID, id int64) (api.Sender, error) {
	return wire(a.Service.Get(ctx, accountID, id))
}

// Update changes the fields in present (Service.Update).
func (a API) Update(ctx context.Context, accountID, id int64, in api.SenderUpdate) (api.Sender, error) {
	return wire(a.Service.Update(ctx, accountID, id, senderPatch(in)))
}

// Verify checks sender id's connection and credentials (Service.Verify): ok and,
// when the check failed, the step that failed and why.
func (a API) Verify(ctx context.Context, accountID, id int64) (api.SenderVerifyResult, error) {
	res, err := a.Service.Verify(ctx, accountID, id)
	if err != nil {
		return api.SenderVerifyResult{}, err
	}
	return api.SenderVerifyResult{Ok: res.OK, Message: res.Message, Step: optional.NonZero(api.SenderVerifyResultStep(res.Step))}, nil
}

// CreatePool adds a sender pool (Service.CreatePool).
func (a API) CreatePool(ctx context.Context, accountID int64, in api.SenderPoolCreate) (api.SenderPool, error) {
	return wirePool(a.Service.CreatePool(ctx, accountID, PoolInput{Name: in.Name, Senders: in.Senders}))
}

// ListPools returns a page of the account's sender pools (Service.ListPools).
func (a API) ListPools(ctx context.Context, accountID, afterID int64, limit int) ([]api.SenderPool, error) {
	rows, err := a.Service.ListPools(ctx, accountID, afterID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]api.SenderPool, len(rows))
	for i, x := range rows {
		out[i] = toAPISenderPool(x)
	}
	return out, nil
}

// GetPool returns one sender pool (Service.GetPool).
func (a API) GetPool(ctx context.Context, accountID, id int64) (api.SenderPool, error) {
	return wirePool(a.Service.GetPool(ctx, accountID, id))
}

// UpdatePool changes the fields in present (Service.UpdatePool).
func (a API) UpdatePool(ctx context.Context, accountID, id int64, in api.SenderPoolUpdate) (api.SenderPool, error) {
	return wirePool(a.Service.UpdatePool(ctx, accountID, id, PoolPatch{Name: in.Name, Senders: in.Senders}))
}

func wire(s Sender, err error) (api.Sender, error) {
	if err != nil {
		return api.Sender{}, err
	}
	return toAPISender(s), nil
}

func wirePool(p Pool, err error) (api.SenderPool, error) {
	if err != nil {
		return api.SenderPool{}, err
	}
	return toAPISenderPool(p), nil
}

func toAPISenderPool(p Pool) api.SenderPool {
	return api.SenderPool{Id: p.ID, Name: p.Name, Senders: optional.NonNil(p.Senders), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

func toAPISender(s Sender) api.Sender {
	out := api.Sender{Id: s.ID, Name: s.Name, Type: api.SenderType(s.Type), Settings: toAPISenderSettings(s.Settings),
		CredentialsHint: s.CredentialsHint, RatePerSecond: s.RatePerSecond, MaxConnections: s.MaxConnections,
		AllowedFrom: optional.NonNil(s.AllowedFrom), Default: s.Default, Idempotent: s.Idempotent,
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
		out[i] = api.SenderDomainLimit{Group: optional.NonZero(api.SenderDomainLimitGroup(l.Group)), Domain: optional.NonZero(l.Domain),
			PerSecond: l.PerSecond}
	}
	return out
}

func toAPIWarmup(w *pacing.Warmup) *api.SenderWarmup {
	if w == nil {
		return nil
	}
	out := &api.SenderWarmup{Preset: optional.NonZero(api.SenderWarmupPreset(w.Preset))}
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
		out[i] = pacing.DomainLimit{Group: optional.String(l.Group), Domain: optional.String(l.Domain), PerSecond: l.PerSecond}
	}
	return out
}

func warmup(in *api.SenderWarmup) *pacing.Warmup {
	if in == nil {
		return nil
	}
	out := &pacing.Warmup{Preset: optional.String(in.Preset), Start: in.Start.Format(time.DateOnly)}
	if in.Caps != nil {
		out.Caps = slices.Clone(*in.Caps)
	}
	return out
}

func toAPISenderSettings(s Settings) api.SenderSettings {
	out := api.SenderSettings{Host: optional.NonZero(s.Host), Security: optional.NonZero(api.SenderSettingsSecurity(s.Security)),
		Username: optional.NonZero(s.Username), Url: optional.NonZero(s.URL), Endpoint: optional.NonZero(s.Endpoint),
		Region: optional.NonZero(s.Region), Domain: optional.NonZero(s.Domain), MessageStream: optional.NonZero(s.MessageStream),
		ConfigurationSet: optional.NonZero(s.ConfigurationSet), DkimSign: s.DKIMSign,
		BounceDomain: optional.NonZero(s.BounceDomain)}
	if s.Port != 0 {
		out.Port = &s.Port
	}
	return out
}

func senderSettings(in *api.SenderSettings) Settings {
	if in == nil {
		return Settings{}
	}
	out := Settings{Host: optional.String(in.Host), Security: optional.String(in.Security), Username: optional.String(in.Username),
		URL: optional.String(in.Url), Endpoint: optional.String(in.Endpoint), Region: optional.String(in.Region), Domain: optional.String(in.Domain),
		MessageStream: optional.String(in.MessageStream), ConfigurationSet: optional.String(in.ConfigurationSet), DKIMSign: in.DkimSign,
		BounceDomain: optional.String(in.BounceDomain)}
	if in.Port != nil {
		out.Port = *in.Port
	}
	return out
}

func senderCredentials(in *api.SenderCredentials) *Credentials {
	if in == nil {
		return nil
	}
	return &Credentials{Password: optional.String(in.Password), Authorization: optional.String(in.Authorization),
		APIKey: optional.String(in.ApiKey), ServerToken: optional.String(in.ServerToken), AccessKeyID: optional.String(in.AccessKeyId),
		SecretAccessKey: optional.String(in.SecretAccessKey)}
}

func senderInput(in api.SenderCreate) Input {
	out := Input{Name: in.Name, Type: string(in.Type), Settings: senderSettings(in.Settings),
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

func senderPatch(in api.SenderUpdate) Patch {
	out := Patch{Name: in.Name, Credentials: senderCredentials(in.Credentials), RatePerSecond: in.RatePerSecond,
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
