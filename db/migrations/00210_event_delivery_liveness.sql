-- +goose Up
-- Event deliveries under faults and between tenants.
--
-- executor_id stamps a claimed delivery with the claiming process's liveness row
-- (executors): a delivery whose process stopped beating is free again after three
-- missed heartbeats, not after its lease. No foreign key, as on sends: a claim must
-- not pay for a key check, and a dead executor's row is deleted while its
-- deliveries are still 'delivering'.
--
-- failures counts the attempts that failed without the receiver saying when to
-- come back: it alone moves a delivery along the retry schedule. attempts keeps
-- counting every claim (the fence of a late outcome, and what the log shows), so a
-- receiver's 503 + Retry-After answers and re-claims after a crash no longer push
-- the next retry to the schedule's last steps.
ALTER TABLE event_deliveries
    ADD COLUMN executor_id bigint,
    ADD COLUMN failures    int NOT NULL DEFAULT 0;
-- Existing rows: every attempt that did not deliver counted as a failure before.
UPDATE event_deliveries SET failures = attempts WHERE status = 'pending' AND attempts > 0;
-- The claim counts an endpoint's deliveries in flight; they are few.
CREATE INDEX event_deliveries_inflight_idx ON event_deliveries (endpoint_id) WHERE status = 'delivering';

-- When the claim last served the endpoint: the claim serves the endpoints that
-- waited longest first, one account at a time, so a tenant's backlog cannot hold
-- another tenant's deliveries back.
ALTER TABLE event_endpoints ADD COLUMN last_claimed_at timestamptz; -- null: never served

-- The API key that minted a stream token: revoking the key revokes its tokens.
-- Null only for tokens minted before this migration (they expire within minutes).
ALTER TABLE event_stream_tokens ADD COLUMN api_key_id bigint REFERENCES api_keys (id) ON DELETE CASCADE;

-- +goose Down
ALTER TABLE event_stream_tokens DROP COLUMN api_key_id;
ALTER TABLE event_endpoints DROP COLUMN last_claimed_at;
DROP INDEX event_deliveries_inflight_idx;
ALTER TABLE event_deliveries DROP COLUMN failures, DROP COLUMN executor_id;
