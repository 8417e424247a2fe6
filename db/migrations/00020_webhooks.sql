-- Inbound webhooks (issue 6): each account's endpoints with their credentials, the
-- soft bounces counted towards a suppression, and the look-ups one-click unsubscribe needs.

-- +goose Up
-- One row per configured provider webhook. The secret is kept in clear because the
-- HMAC schemes need it to verify; it is shown to the tenant once, at create/rotate.
-- After a rotation the previous secret keeps verifying until previous_expires_at, so
-- the provider side can be switched without dropping events.
CREATE TABLE webhook_endpoints (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id          bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    source              text        NOT NULL
                                    CHECK (source IN ('standard', 'mailgun', 'sendgrid', 'postmark', 'ses', 'resend')),
    name                text        NOT NULL DEFAULT '' CHECK (length(name) <= 200),
    -- standard/resend: whsec_<base64>; mailgun: signing key; postmark: user:password;
    -- sendgrid: the public key (base64 DER) from SendGrid; ses: empty.
    secret              text        NOT NULL DEFAULT '',
    previous_secret     text,
    previous_expires_at timestamptz,
    -- Per-source settings, e.g. {"topic_arns": [...]} for ses.
    settings            jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(settings) = 'object'),
    -- The last SNS SubscriptionConfirmation, kept for the operator to confirm by hand.
    subscribe_url       text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, id);

-- Soft bounces per address: after SENDONCE_SOFT_BOUNCE_LIMIT within
-- SENDONCE_SOFT_BOUNCE_WINDOW the address is suppressed as a hard bounce.
CREATE TABLE soft_bounces (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email_lower text        NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX soft_bounces_address_idx ON soft_bounces (account_id, email_lower, occurred_at);

-- Correlating provider events to their send by provider message id.
CREATE INDEX sends_provider_message_idx ON sends (account_id, provider_message_id)
    WHERE provider_message_id IS NOT NULL;

-- +goose Down
DROP INDEX sends_provider_message_idx;
DROP TABLE soft_bounces;
DROP TABLE webhook_endpoints;
