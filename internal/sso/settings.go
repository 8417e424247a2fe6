package sso

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sendonce/sendonce/internal/access"
	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Settings are an account's single sign-on settings as the API shows them: the
// client secret is never among them, only whether one is stored.
type Settings struct {
	IssuerURL      string
	ClientID       string
	AllowedDomains []string
	DefaultRole    string
	Enabled        bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Input is what an owner or admin saves. ClientSecret nil keeps the stored one
// (the first save needs one).
type Input struct {
	IssuerURL      string
	ClientID       string
	ClientSecret   *string
	AllowedDomains []string
	DefaultRole    string
	Enabled        bool
}

// Bounds of the settings.
const (
	maxDomains     = 50
	maxClientID    = 512
	maxSecretBytes = 1024
	maxIssuerBytes = 2048
)

var errNone = apperr.New(apperr.NotFound, "this account has no single sign-on settings")

// Get returns the account's settings; an account without any is not found.
func (s *Service) Get(ctx context.Context, accountID int64) (Settings, error) {
	row, err := store.New(s.pool).SSOGet(ctx, accountID)
	if postgres.NoRows(err) {
		return Settings{}, errNone
	}
	if err != nil {
		return Settings{}, err
	}
	return Settings{IssuerURL: row.IssuerUrl, ClientID: row.ClientID, AllowedDomains: row.AllowedDomains,
		DefaultRole: row.DefaultRole, Enabled: row.Enabled, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt}, nil
}

// Put saves the account's settings (422 naming the field for bad input; nothing
// is saved then). When they are enabled, the issuer's discovery document is
// fetched first, through the egress guard: a provider that cannot be reached, or
// that names another issuer, is refused now rather than at the first sign-in.
func (s *Service) Put(ctx context.Context, accountID int64, in Input) (Settings, error) {
	domains, err := s.check(&in)
	if err != nil {
		return Settings{}, err
	}
	q := store.New(s.pool)
	p := store.SSOUpsertParams{AccountID: accountID, IssuerUrl: in.IssuerURL, ClientID: in.ClientID,
		AllowedDomains: domains, DefaultRole: in.DefaultRole, Enabled: in.Enabled}
	if in.ClientSecret != nil {
		keyID, sealed, err := s.ring.Seal([]byte(*in.ClientSecret), secretAAD(accountID))
		if err != nil {
			return Settings{}, apperr.Invalidf("/client_secret", "cannot be stored: %v", err)
		}
		p.SecretKeyID, p.SecretSealed = &keyID, sealed
	} else if _, err := q.SSOGet(ctx, accountID); postgres.NoRows(err) {
		return Settings{}, apperr.Invalidf("/client_secret", "is required the first time the settings are saved")
	} else if err != nil {
		return Settings{}, err
	}
	if in.Enabled {
		if _, err := s.provider(ctx, in.IssuerURL); err != nil {
			s.opts.Logger.Info("sso: issuer discovery failed", "account_id", accountID, "issuer", in.IssuerURL, "err", err)
			return Settings{}, apperr.Invalidf("/issuer_url", "its OpenID Connect discovery document "+
				"(/.well-known/openid-configuration) could not be fetched, or names another issuer")
		}
	}
	row, err := q.SSOUpsert(ctx, p)
	if err != nil {
		return Settings{}, postgres.Error(err, "account")
	}
	return Settings{IssuerURL: row.IssuerUrl, ClientID: row.ClientID, AllowedDomains: row.AllowedDomains,
		DefaultRole: row.DefaultRole, Enabled: row.Enabled, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt}, nil
}

// Delete removes the account's settings; sign-in through its provider stops at
// once (flows under way find no settings when they come back).
func (s *Service) Delete(ctx context.Context, accountID int64) error {
	n, err := store.New(s.pool).SSODelete(ctx, accountID)
	if err != nil {
		return err
	}
	if n == 0 {
		return errNone
	}
	return nil
}

// check validates in and returns its domains normalised (lower case, no
// duplicates, in the order given).
func (s *Service) check(in *Input) ([]string, error) {
	in.IssuerURL = strings.TrimSpace(in.IssuerURL)
	if err := s.checkIssuer(in.IssuerURL); err != nil {
		return nil, err
	}
	in.ClientID = strings.TrimSpace(in.ClientID)
	if in.ClientID == "" || len(in.ClientID) > maxClientID || strings.ContainsAny(in.ClientID, "\r\n") {
		return nil, apperr.Invalidf("/client_id", "is required, one line of at most %d bytes", maxClientID)
	}
	if in.ClientSecret != nil && (*in.ClientSecret == "" || len(*in.ClientSecret) > maxSecretBytes) {
		return nil, apperr.Invalidf("/client_secret", "must be 1 to %d bytes (leave it out to keep the stored one)", maxSecretBytes)
	}
	if len(in.AllowedDomains) == 0 || len(in.AllowedDomains) > maxDomains {
		return nil, apperr.Invalidf("/allowed_domains", "must list 1 to %d domains", maxDomains)
	}
	var domains []string
	for i, d := range in.AllowedDomains {
		d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
		if !validDomain(d) {
			return nil, apperr.Invalidf("/allowed_domains/"+strconv.Itoa(i), "must be a domain name such as example.com (no @, no scheme)")
		}
		if !slices.Contains(domains, d) {
			domains = append(domains, d)
		}
	}
	if in.DefaultRole == access.RoleOwner {
		return nil, apperr.Invalidf("/default_role", "may not be owner: an owner is made by another owner, by hand")
	}
	if !slices.Contains(access.Roles, in.DefaultRole) {
		return nil, apperr.Invalidf("/default_role", "must be one of admin, editor, approver, viewer")
	}
	return domains, nil
}

// checkIssuer accepts an absolute https URL (http only when the deployment
// allows it, for a provider on a development machine) with no query, fragment
// or credentials, whose host the egress guard does not refuse outright.
func (s *Service) checkIssuer(raw string) error {
	const ptr = "/issuer_url"
	u, err := url.Parse(raw)
	if raw == "" || len(raw) > maxIssuerBytes || err != nil || u.Host == "" {
		return apperr.Invalidf(ptr, "must be the provider's absolute issuer URL, such as https://login.example.com")
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && s.opts.AllowHTTP) {
		return apperr.Invalidf(ptr, "must be an https URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return apperr.Invalidf(ptr, "must have no query, fragment or credentials")
	}
	if err := s.opts.Guard.CheckURL(raw); err != nil {
		return apperr.Invalidf(ptr, "%v", err)
	}
	return nil
}

func validDomain(d string) bool {
	if len(d) < 3 || len(d) > 253 || !strings.Contains(d, ".") {
		return false
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// secretAAD binds a sealed client secret to its account: copied to another
// account's row it does not open.
func secretAAD(accountID int64) []byte {
	return []byte("sendonce sso client secret\x00" + strconv.FormatInt(accountID, 10))
}
