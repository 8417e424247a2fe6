-- +goose Up
-- DKIM signing keys of an account's sending domains. The private key (PKCS #8 DER)
-- is stored only as AES-GCM ciphertext (nonce || sealed) under the key
-- secret_key_id of SENDONCE_SECRETS_KEY, as sender credentials are, bound to its
-- account, domain and selector; public_key is the p= value to publish at
-- <selector>._domainkey.<domain>. At most one key per (account, domain) is active:
-- the one SMTP senders sign with. A rotation activates a new key; the previous one
-- stays (published, inactive) until deleted, so mail signed with it in flight
-- still verifies.
CREATE TABLE dkim_keys (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    domain        text        NOT NULL CHECK (length(domain) BETWEEN 3 AND 253),
    selector      text        NOT NULL CHECK (length(selector) BETWEEN 1 AND 63),
    algorithm     text        NOT NULL CHECK (algorithm IN ('rsa-2048', 'ed25519')),
    public_key    text        NOT NULL,
    secret_key_id text        NOT NULL,
    secret        bytea       NOT NULL,
    active        boolean     NOT NULL DEFAULT false,
    activated_at  timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, domain, selector)
);
CREATE INDEX dkim_keys_account_idx ON dkim_keys (account_id, domain, id);
-- The signing key of a domain: one at most.
CREATE UNIQUE INDEX dkim_keys_active_idx ON dkim_keys (account_id, domain) WHERE active;

-- +goose Down
DROP TABLE dkim_keys;
