-- +goose Up
-- Single sign-on: an account's OpenID Connect identity provider. The client secret
-- is sealed with the credentials key ring (SENDONCE_SECRETS_KEY, key id + AES-GCM,
-- bound to the account's id) and never read back through the API. A person whose
-- verified address is in allowed_domains may sign in through the provider; one who
-- is not yet a member becomes one with default_role.
CREATE TABLE account_sso (
    account_id      bigint      PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    issuer_url      text        NOT NULL CHECK (length(issuer_url) BETWEEN 1 AND 2048),
    client_id       text        NOT NULL CHECK (length(client_id) BETWEEN 1 AND 512),
    secret_key_id   text        NOT NULL,
    secret_sealed   bytea       NOT NULL,
    -- Lower-case domain names, without a leading @.
    allowed_domains text[]      NOT NULL CHECK (cardinality(allowed_domains) BETWEEN 1 AND 50),
    default_role    text        NOT NULL CHECK (default_role IN ('owner', 'admin', 'editor', 'approver', 'viewer')),
    enabled         boolean     NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- The sign-in page looks an address's domain up over every account.
CREATE INDEX account_sso_domains_idx ON account_sso USING gin (allowed_domains) WHERE enabled;

-- One sign-in under way: the browser went to the provider with a state whose hash
-- is here (and in its cookie), and comes back once. The nonce and the PKCE verifier
-- are sealed like the client secret, bound to the state's hash.
CREATE TABLE sso_flows (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    state_hash bytea       NOT NULL UNIQUE CHECK (length(state_hash) = 32),
    key_id     text        NOT NULL,
    sealed     bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX sso_flows_expires_idx ON sso_flows (expires_at);

-- A session signed in through an account's identity provider acts in that account
-- only: it cannot switch to the person's other accounts nor change their own
-- credentials (the provider vouches for the person in its account, nowhere else).
ALTER TABLE dashboard_sessions ADD COLUMN via_sso boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE dashboard_sessions DROP COLUMN via_sso;
DROP TABLE sso_flows;
DROP TABLE account_sso;
