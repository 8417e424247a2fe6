-- +goose Up
-- A sender is how one account's mail leaves: its own SMTP relay, HTTP endpoint or
-- native provider account, with its own limits. Credentials are stored only as AES-GCM
-- ciphertext (nonce || sealed) under the key secret_key_id of SENDONCE_SECRETS_KEY;
-- secret_hint is the masked tail shown back to the tenant.
CREATE TABLE senders (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name            text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    type            text        NOT NULL
                                CHECK (type IN ('smtp', 'http', 'resend', 'postmark', 'sendgrid', 'mailgun', 'ses')),
    settings        jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(settings) = 'object'),
    secret_key_id   text        NOT NULL DEFAULT '',
    secret          bytea,
    secret_hint     text        NOT NULL DEFAULT '',
    rate_per_second double precision NOT NULL DEFAULT 0 CHECK (rate_per_second >= 0),
    max_connections integer     NOT NULL DEFAULT 0 CHECK (max_connections >= 0),
    -- Addresses (user@domain) or domains a campaign's From may use; empty allows any.
    allowed_from    text[]      NOT NULL DEFAULT '{}',
    is_default      boolean     NOT NULL DEFAULT false,
    -- Health: consecutive auth/config failures, and why the sender's campaigns were
    -- paused when they reached the limit (NULL: healthy).
    auth_failures   integer     NOT NULL DEFAULT 0,
    paused_reason   text,
    paused_at       timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, id)
);
CREATE INDEX senders_account_id_idx ON senders (account_id, id);
-- At most one default sender per account.
CREATE UNIQUE INDEX senders_default_idx ON senders (account_id) WHERE is_default;

-- A campaign names one of its own account's senders (the composite key makes another
-- tenant's sender unreferenceable); NULL means the account's default sender, else the
-- environment's provider. A sender in use cannot be deleted.
ALTER TABLE campaigns
    ADD COLUMN sender_id bigint,
    ADD CONSTRAINT campaigns_sender_fk FOREIGN KEY (account_id, sender_id)
        REFERENCES senders (account_id, id) ON DELETE RESTRICT;
-- Why a campaign was paused by the system (a sender's auth failures); NULL when paused by hand.
ALTER TABLE campaigns ADD COLUMN paused_reason text;

-- +goose Down
ALTER TABLE campaigns DROP COLUMN paused_reason;
ALTER TABLE campaigns DROP CONSTRAINT campaigns_sender_fk, DROP COLUMN sender_id;
DROP TABLE senders;
