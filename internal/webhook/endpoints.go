package webhook

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sendonce/sendonce/internal/apperr"
	"github.com/sendonce/sendonce/internal/postgres"
	"github.com/sendonce/sendonce/internal/store"
)

// Endpoint is a configured webhook endpoint, without its secret.
type Endpoint struct {
	ID        int64
	Source    string
	Name      string
	TopicARNs []string
	Path      string
	// PreviousSecretExpiresAt is when the secret replaced by the last rotation stops
	// verifying; secrets replaced by earlier rotations keep their own expiry.
	PreviousSecretExpiresAt *time.Time
	// SubscribeURL is the last SNS subscription confirmation, for the operator to open.
	SubscribeURL *string
	CreatedAt    time.Time
}

// Credentials are shown once, at create and rotate.
type Credentials struct {
	// Secret is the signing secret (standard: whsec_…), or what was supplied.
	Secret string
	// Username and Password are Postmark's basic-auth credentials.
	Username string
	Password string
}

// CreateInput is what a tenant sends to create an endpoint.
type CreateInput struct {
	Source string
	Name   string
	// Secret is required where the provider makes the key: mailgun (signing key),
	// resend (whsec_…), sendgrid (public key, base64 DER). Optional for standard.
	Secret string
	// TopicARNs is required for ses: the only SNS topics accepted.
	TopicARNs []string
}

type settings struct {
	TopicARNs []string `json:"topic_arns,omitempty"`
}

// Create adds an endpoint and returns it with its credentials.
func (s *Service) Create(ctx context.Context, accountID int64, in CreateInput) (Endpoint, Credentials, error) {
	if !ValidSource(in.Source) {
		return Endpoint{}, Credentials{}, apperr.Invalidf("/source", "source must be standard, mailgun, sendgrid, postmark, ses or resend")
	}
	if len(in.Name) > 200 {
		return Endpoint{}, Credentials{}, apperr.Invalidf("/name", "name is at most 200 characters")
	}
	secret, creds, err := newSecret(in.Source, in.Secret)
	if err != nil {
		return Endpoint{}, Credentials{}, err
	}
	if in.Source == SourceSES {
		if len(in.TopicARNs) == 0 {
			return Endpoint{}, Credentials{}, apperr.Invalidf("/topic_arns", "ses endpoints need the SNS topic ARNs to accept")
		}
		for i, arn := range in.TopicARNs {
			if !strings.HasPrefix(arn, "arn:") {
				return Endpoint{}, Credentials{}, apperr.Invalidf("/topic_arns/"+itoa(int64(i)), "not an ARN: %q", arn)
			}
		}
	} else if len(in.TopicARNs) > 0 {
		return Endpoint{}, Credentials{}, apperr.Invalidf("/topic_arns", "topic_arns applies to ses endpoints only")
	}
	set, _ := json.Marshal(settings{TopicARNs: in.TopicARNs})
	// In a transaction, which carries the request's audit entry.
	var row store.WebhookEndpoint
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		row, err = store.New(tx).WebhookEndpointCreate(ctx, store.WebhookEndpointCreateParams{
			AccountID: accountID, Source: in.Source, Name: in.Name, Secret: secret, Settings: set,
		})
		return err
	})
	if err != nil {
		return Endpoint{}, Credentials{}, postgres.Error(err, "webhook endpoint")
	}
	return toEndpoint(row), creds, nil
}

// List returns up to limit endpoints after id afterID, in id order, without secrets.
func (s *Service) List(ctx context.Context, accountID, afterID int64, limit int) ([]Endpoint, error) {
	rows, err := store.New(s.pool).WebhookEndpointList(ctx, store.WebhookEndpointListParams{
		AccountID: accountID, AfterID: afterID, MaxRows: int32(limit),
	})
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, 0, len(rows))
	for _, r := range rows {
		out = append(out, toEndpoint(r))
	}
	return out, nil
}

// Get returns one endpoint of the account.
func (s *Service) Get(ctx context.Context, accountID, id int64) (Endpoint, error) {
	row, err := store.New(s.pool).WebhookEndpointGet(ctx, store.WebhookEndpointGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Endpoint{}, postgres.Error(err, "webhook endpoint")
	}
	return toEndpoint(row), nil
}

// RotateInput asks for a new secret; the old one verifies for Grace more (0: none).
type RotateInput struct {
	Secret       string
	GraceSeconds *int64
}

// DefaultGrace is how long a rotated-out secret keeps verifying unless told otherwise.
const DefaultGrace = 24 * time.Hour

// Rotate replaces the endpoint's secret and returns the new credentials.
func (s *Service) Rotate(ctx context.Context, accountID, id int64, in RotateInput) (Endpoint, Credentials, error) {
	q := store.New(s.pool)
	cur, err := q.WebhookEndpointGet(ctx, store.WebhookEndpointGetParams{AccountID: accountID, ID: id})
	if err != nil {
		return Endpoint{}, Credentials{}, postgres.Error(err, "webhook endpoint")
	}
	if cur.Source == SourceSES {
		return Endpoint{}, Credentials{}, apperr.Invalidf("/source", "ses endpoints have no secret: SNS signs with Amazon's certificate")
	}
	grace := DefaultGrace
	if in.GraceSeconds != nil {
		if *in.GraceSeconds < 0 || *in.GraceSeconds > 30*86400 {
			return Endpoint{}, Credentials{}, apperr.Invalidf("/grace_seconds", "grace_seconds must be between 0 and 2592000")
		}
		grace = time.Duration(*in.GraceSeconds) * time.Second
	}
	secret, creds, err := newSecret(cur.Source, in.Secret)
	if err != nil {
		return Endpoint{}, Credentials{}, err
	}
	now := s.opts.Now()
	expires := now.Add(grace)
	var row store.WebhookEndpoint
	err = postgres.InTx(ctx, s.pool, func(tx pgx.Tx) error {
		q := store.New(tx)
		var err error
		row, err = q.WebhookEndpointRotate(ctx, store.WebhookEndpointRotateParams{
			PreviousExpiresAt: &expires, Secret: secret, AccountID: accountID, ID: id, CurrentSecret: cur.Secret,
		})
		if err = postgres.Error(err, "webhook endpoint"); apperr.Is(err, apperr.NotFound) {
			return apperr.New(apperr.Conflict, "the endpoint was rotated or deleted meanwhile; retry")
		}
		if err != nil || grace == 0 {
			return err
		}
		// Every replaced secret keeps its own grace period, so a second rotation
		// does not cut the first one's short.
		return q.WebhookPreviousSecretKeep(ctx, store.WebhookPreviousSecretKeepParams{
			AccountID: accountID, EndpointID: id, Secret: cur.Secret, ExpiresAt: expires, Now: &now,
		})
	})
	if err != nil {
		return Endpoint{}, Credentials{}, postgres.Error(err, "webhook endpoint")
	}
	return toEndpoint(row), creds, nil
}

// Delete removes an endpoint; its deliveries answer 401 from then on.
func (s *Service) Delete(ctx context.Context, accountID, id int64) error {
	n, err := store.New(s.pool).WebhookEndpointDelete(ctx, store.WebhookEndpointDeleteParams{AccountID: accountID, ID: id})
	if err != nil {
		return err
	}
	if n == 0 {
		return apperr.New(apperr.NotFound, "webhook endpoint not found")
	}
	return nil
}

// newSecret makes (or checks the supplied) credentials for a source.
func newSecret(source, supplied string) (string, Credentials, error) {
	switch source {
	case SourceStandard, SourceResend:
		if supplied == "" && source == SourceStandard {
			supplied = "whsec_" + base64.StdEncoding.EncodeToString(randomBytes(32))
		}
		key, err := decodeWhsec(supplied)
		if err != nil || len(key) < 16 {
			return "", Credentials{}, apperr.Invalidf("/secret", "secret must be whsec_ followed by base64 of at least 16 bytes")
		}
		return supplied, Credentials{Secret: supplied}, nil
	case SourceMailgun:
		if len(supplied) < 16 {
			return "", Credentials{}, apperr.Invalidf("/secret", "secret must be the Mailgun webhook signing key")
		}
		return supplied, Credentials{Secret: supplied}, nil
	case SourceSendGrid:
		if _, err := parseECDSAKey(supplied); err != nil {
			return "", Credentials{}, apperr.Invalidf("/secret", "secret must be SendGrid's verification key (base64 DER ECDSA public key)")
		}
		return supplied, Credentials{Secret: supplied}, nil
	case SourcePostmark:
		if supplied != "" {
			return "", Credentials{}, apperr.Invalidf("/secret", "postmark credentials are generated, not supplied")
		}
		user, pass := "pm-"+hex.EncodeToString(randomBytes(6)), hex.EncodeToString(randomBytes(24))
		return user + ":" + pass, Credentials{Username: user, Password: pass}, nil
	case SourceSES:
		if supplied != "" {
			return "", Credentials{}, apperr.Invalidf("/secret", "ses endpoints take topic_arns, not a secret")
		}
		return "", Credentials{}, nil
	}
	return "", Credentials{}, apperr.Invalidf("/source", "unknown source %q", source)
}

// decodeWhsec decodes a Standard Webhooks secret: "whsec_" then standard base64.
func decodeWhsec(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
}

func parseECDSAKeyDER(b []byte) (any, error) { return x509.ParsePKIXPublicKey(b) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return b
}

func toEndpoint(r store.WebhookEndpoint) Endpoint {
	var set settings
	_ = json.Unmarshal(r.Settings, &set)
	return Endpoint{
		ID: r.ID, Source: r.Source, Name: r.Name, TopicARNs: set.TopicARNs,
		Path:                    "/v1/webhooks/" + r.Source + "/" + itoa(r.ID),
		PreviousSecretExpiresAt: r.PreviousExpiresAt, SubscribeURL: r.SubscribeUrl, CreatedAt: r.CreatedAt,
	}
}
