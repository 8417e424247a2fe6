package dkim

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sendonce/sendonce/internal/store"
)

// Ring is a Sealer that also names the key it seals with (sender.KeyRing).
type Ring interface {
	Sealer
	First() string
}

// CheckKeys reports every stored DKIM key ring cannot decrypt (serve refuses to
// start on it, as on sender credentials: mail From those domains would fail).
func CheckKeys(ctx context.Context, pool *pgxpool.Pool, ring Sealer) error {
	rows, err := store.New(pool).DKIMKeySecretsAll(ctx)
	if err != nil {
		return err
	}
	var bad []string
	var first error
	for _, r := range rows {
		if _, err := ring.Open(r.SecretKeyID, r.Secret, aad(r.AccountID, r.Domain, r.Selector)); err != nil {
			bad = append(bad, strconv.FormatInt(r.ID, 10))
			if first == nil {
				first = err
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("SENDONCE_SECRETS_KEY cannot decrypt %d DKIM key(s) (ids %s): %w; "+
			"add the key they were encrypted with to the ring", len(bad), strings.Join(bad, ", "), first)
	}
	return nil
}

// Rotate re-encrypts every stored DKIM key under ring's first key and returns how
// many changed (`sendonce senders rotate-secrets` runs it with the senders').
func Rotate(ctx context.Context, pool *pgxpool.Pool, ring Ring) (int, error) {
	q := store.New(pool)
	rows, err := q.DKIMKeySecretsAll(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range rows {
		if r.SecretKeyID == ring.First() {
			continue
		}
		binding := aad(r.AccountID, r.Domain, r.Selector)
		pt, err := ring.Open(r.SecretKeyID, r.Secret, binding)
		if err != nil {
			return n, fmt.Errorf("DKIM key %d: %w", r.ID, err)
		}
		keyID, sealed, err := ring.Seal(pt, binding)
		if err != nil {
			return n, err
		}
		c, err := q.DKIMKeySecretReplace(ctx, store.DKIMKeySecretReplaceParams{SecretKeyID: keyID, Secret: sealed,
			AccountID: r.AccountID, ID: r.ID, OldSecret: r.Secret})
		if err != nil {
			return n, err
		}
		n += int(c)
	}
	return n, nil
}
