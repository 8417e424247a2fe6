-- Events out: the outbox every reported state change writes in its own transaction,
-- the tenants' endpoints that receive them signed, the deliveries (one POST each,
-- one event or a bounded batch), and the short-lived tokens of the browser stream.

-- +goose Up
-- One row per event, inserted by the statement (or in the transaction) that makes
-- the change it reports, so a rolled-back change leaves no event. xid is the
-- inserting transaction's id: ids are allocated before commit, so rows become
-- visible out of id order, and a reader paging by id alone could skip a row that
-- commits late. Readers page by (xid, id) and only up to the oldest transaction
-- still running (pg_snapshot_xmin), below which no row can appear any more.
CREATE TABLE events (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type        text        NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    data        jsonb       NOT NULL DEFAULT '{}',
    xid         bigint      NOT NULL DEFAULT pg_current_xact_id()::text::bigint
);
CREATE INDEX events_account_order_idx ON events (account_id, xid, id);
CREATE INDEX events_occurred_idx ON events (occurred_at);

-- A tenant's receiver. The secret (whsec_…) is kept in clear because signing needs
-- it; it is shown once. cursor_xid/cursor_id is how far the fan-out has turned
-- events into deliveries for this endpoint, in the (xid, id) order above.
CREATE TABLE event_endpoints (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url             text        NOT NULL CHECK (length(url) <= 2000),
    description     text        NOT NULL DEFAULT '' CHECK (length(description) <= 500),
    -- Empty means every type.
    event_types     text[]      NOT NULL DEFAULT '{}',
    enabled         boolean     NOT NULL DEFAULT true,
    disabled_reason text,
    -- Per-recipient (send.*) events are posted batch_size at a time (1: one each).
    batch_size      int         NOT NULL DEFAULT 1 CHECK (batch_size BETWEEN 1 AND 100),
    secret          text        NOT NULL,
    cursor_xid      bigint      NOT NULL,
    cursor_id       bigint      NOT NULL,
    -- When the current run of failed attempts began; cleared by a success.
    failing_since   timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_endpoints_account_idx ON event_endpoints (account_id, id);

-- Rotated-out secrets keep signing (beside the new one) until their own expiry.
CREATE TABLE event_endpoint_secrets (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id bigint      NOT NULL REFERENCES event_endpoints (id) ON DELETE CASCADE,
    secret      text        NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX event_endpoint_secrets_idx ON event_endpoint_secrets (endpoint_id, expires_at);

-- One POST to one endpoint: a single event (webhook-id = the event's id) or a batch
-- of per-recipient events (webhook-id = the delivery's). Retries reuse the row, so
-- the webhook-id is stable across them. Claimed with SKIP LOCKED and a lease.
CREATE TABLE event_deliveries (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id       bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    endpoint_id      bigint      NOT NULL REFERENCES event_endpoints (id) ON DELETE CASCADE,
    event_ids        bigint[]    NOT NULL CHECK (cardinality(event_ids) BETWEEN 1 AND 100),
    batch            boolean     NOT NULL DEFAULT false,
    status           text        NOT NULL DEFAULT 'pending'
                                 CHECK (status IN ('pending', 'delivering', 'delivered', 'failed')),
    attempts         int         NOT NULL DEFAULT 0,
    -- When the row is next due: for a pending row its next attempt, for a row
    -- being delivered the end of its lease (a claim past it means the claimer died).
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_status_code int,
    last_error       text,
    last_latency_ms  int,
    last_attempt_at  timestamptz,
    delivered_at     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_deliveries_due_idx ON event_deliveries (endpoint_id, next_attempt_at, id)
    WHERE status IN ('pending', 'delivering');
CREATE INDEX event_deliveries_endpoint_idx ON event_deliveries (account_id, endpoint_id, id);
CREATE INDEX event_deliveries_created_idx ON event_deliveries (created_at);

-- Short-lived tokens that authorise GET /v1/events/stream only (EventSource cannot
-- send an Authorization header). Only the SHA-256 of the token is kept.
CREATE TABLE event_stream_tokens (
    token_sha256 bytea       PRIMARY KEY,
    account_id   bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    expires_at   timestamptz NOT NULL
);

-- +goose Down
DROP TABLE event_stream_tokens;
DROP TABLE event_deliveries;
DROP TABLE event_endpoint_secrets;
DROP TABLE event_endpoints;
DROP TABLE events;
