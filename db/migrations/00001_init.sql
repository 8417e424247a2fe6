-- The whole data model of DESIGN.md §2. Every tenant table carries account_id so that
-- every query a tenant can trigger filters on it, and so the schema can later be
-- distributed by tenant without changing the queries.

-- +goose Up
CREATE TABLE accounts (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- API keys are stored as SHA-256 hashes of the token; the prefix is shown to humans
-- so they can tell keys apart, and is never enough to authenticate.
CREATE TABLE api_keys (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id   bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         text        NOT NULL,
    prefix       text        NOT NULL UNIQUE,
    token_hash   bytea       NOT NULL CHECK (length(token_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id);

CREATE TABLE subscribers (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email       text        NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    email_lower text        NOT NULL CHECK (email_lower = lower(email)),
    name        text        NOT NULL DEFAULT '',
    attributes  jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
    status      text        NOT NULL DEFAULT 'pending'
                            CHECK (status IN ('pending', 'confirmed', 'unsubscribed')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, email_lower)
);
-- Keyset pagination per tenant, and the recipient build (account, confirmed).
CREATE INDEX subscribers_account_id_idx ON subscribers (account_id, id);

CREATE TABLE lists (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name        text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, name)
);
CREATE INDEX lists_account_id_idx ON lists (account_id, id);

CREATE TABLE list_members (
    list_id       bigint      NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
    subscriber_id bigint      NOT NULL REFERENCES subscribers (id) ON DELETE CASCADE,
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (list_id, subscriber_id)
);
CREATE INDEX list_members_subscriber_idx ON list_members (subscriber_id);

-- A suppression always wins over subscriber status: it is checked when the recipient
-- list is built and again when each recipient is claimed.
CREATE TABLE suppressions (
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email_lower text        NOT NULL CHECK (email_lower = lower(email_lower)),
    reason      text        NOT NULL
                            CHECK (reason IN ('unsubscribe', 'hard_bounce', 'complaint', 'manual')),
    source      text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, email_lower)
);

CREATE TABLE campaigns (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id       bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name             text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    subject          text        NOT NULL,
    from_email       text        NOT NULL,
    from_name        text        NOT NULL DEFAULT '',
    reply_to         text        NOT NULL DEFAULT '',
    html_template    text        NOT NULL DEFAULT '',
    text_template    text        NOT NULL DEFAULT '',
    language         text        NOT NULL DEFAULT '',
    -- Target lists; empty means every confirmed subscriber of the account.
    list_ids         bigint[]    NOT NULL DEFAULT '{}',
    status           text        NOT NULL DEFAULT 'draft'
                                 CHECK (status IN ('draft', 'approved', 'sending', 'paused', 'sent', 'cancelled')),
    -- What to do with a recipient whose send was in flight when a process died and
    -- whose provider cannot deduplicate: skip (mark unknown) or retry (risk a copy).
    ambiguous_policy text        NOT NULL DEFAULT 'skip' CHECK (ambiguous_policy IN ('skip', 'retry')),
    scheduled_for    timestamptz,
    approved_at      timestamptz,
    started_at       timestamptz,
    finished_at      timestamptz,
    cancelled_at     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_account_id_idx ON campaigns (account_id, id);
-- The scheduler's look-ups: due approved campaigns, and campaigns being sent.
CREATE INDEX campaigns_due_idx ON campaigns (scheduled_for) WHERE status = 'approved';
CREATE INDEX campaigns_sending_idx ON campaigns (account_id, id) WHERE status = 'sending';

-- One row per (campaign, recipient). The uniqueness constraints are the last line of
-- defence against a double send: whatever happens upstream, a recipient cannot be
-- queued twice for one campaign, and a job_id names exactly one row.
CREATE TABLE sends (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_id         bigint      NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    account_id          bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- No foreign key: deleting a subscriber must not erase the record of what was sent.
    subscriber_id       bigint      NOT NULL,
    email               text        NOT NULL,
    email_lower         text        NOT NULL,
    job_id              text        NOT NULL UNIQUE,
    status              text        NOT NULL DEFAULT 'queued'
                                    CHECK (status IN ('queued', 'sending', 'sent', 'failed', 'suppressed', 'cancelled', 'unknown')),
    attempts            integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    lease_until         timestamptz,
    next_attempt_at     timestamptz NOT NULL DEFAULT '-infinity',
    provider_message_id text,
    last_error          text,
    feedback            text        CHECK (feedback IN ('hard_bounce', 'soft_bounce', 'complaint', 'unsubscribe')),
    feedback_at         timestamptz,
    sent_at             timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (campaign_id, subscriber_id),
    CHECK (status <> 'sending' OR lease_until IS NOT NULL)
);
-- The claim index: a partial index pins the claim plan to the queued rows of one
-- campaign in id order, so the drain stays linear (DESIGN.md §4).
CREATE INDEX sends_claim_idx ON sends (campaign_id, id) WHERE status = 'queued';
-- The rescuer's index: in-flight rows by lease expiry.
CREATE INDEX sends_lease_idx ON sends (lease_until) WHERE status = 'sending';
-- Per-campaign listing and counting.
CREATE INDEX sends_campaign_status_idx ON sends (campaign_id, status, id);
-- The claim index is rewritten on every send: vacuum sends far more eagerly than the default.
ALTER TABLE sends SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02,
                       autovacuum_vacuum_cost_delay = 0);

-- Stored responses for POSTs carrying an Idempotency-Key (Stripe's semantics).
CREATE TABLE idempotency_keys (
    account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    key             text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    method          text        NOT NULL,
    path            text        NOT NULL,
    request_hash    bytea       NOT NULL,
    response_status integer,
    response_body   bytea,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL DEFAULT now() + interval '24 hours',
    PRIMARY KEY (account_id, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- The set of provider events already applied, so a replayed webhook changes nothing.
CREATE TABLE webhook_events (
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    source      text        NOT NULL,
    event_id    text        NOT NULL,
    type        text        NOT NULL DEFAULT '',
    email_lower text,
    payload     jsonb,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, source, event_id)
);

-- +goose Down
DROP TABLE webhook_events;
DROP TABLE idempotency_keys;
DROP TABLE sends;
DROP TABLE campaigns;
DROP TABLE suppressions;
DROP TABLE list_members;
DROP TABLE lists;
DROP TABLE subscribers;
DROP TABLE api_keys;
DROP TABLE accounts;
