-- Erasure of a person (GDPR Art. 17): what is removed or pseudonymised is listed in
-- docs/reports.md. Two things stay:
--
-- * a keyed hash of the address in suppressions, reason 'erasure', so a later
--   import, create or sign-up of the same address is suppressed again: the key is
--   derived from the deployment's key ring and never stored, so the row cannot be
--   turned back into the address by anyone holding the database alone. The row's
--   email_lower is 'erased:' and the hex HMAC (lower case, as the column's CHECK
--   wants), which no address can equal (an address has an '@').
-- * one erasures row per request: who asked and what was done, never the address.
--   It is also what makes a repeated request idempotent.

-- +goose Up
ALTER TABLE suppressions DROP CONSTRAINT suppressions_reason_check;
ALTER TABLE suppressions ADD CONSTRAINT suppressions_reason_check
    CHECK (reason IN ('unsubscribe', 'hard_bounce', 'complaint', 'manual', 'erasure'));

CREATE TABLE erasures (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- NULL when the person was an address without a subscriber (a message's link).
    subscriber_id bigint,
    -- Who asked: 'api_key:<id>', 'session:<id>' or 'self-service'.
    requested_by  text        NOT NULL CHECK (length(requested_by) BETWEEN 1 AND 100),
    status        text        NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed')),
    -- What each step changed (row counts per table), filled when completed.
    counts        jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(counts) = 'object'),
    created_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz
);
CREATE UNIQUE INDEX erasures_subscriber_key ON erasures (account_id, subscriber_id) WHERE subscriber_id IS NOT NULL;

-- +goose Down
DROP TABLE erasures;
DELETE FROM suppressions WHERE reason = 'erasure';
ALTER TABLE suppressions DROP CONSTRAINT suppressions_reason_check;
ALTER TABLE suppressions ADD CONSTRAINT suppressions_reason_check
    CHECK (reason IN ('unsubscribe', 'hard_bounce', 'complaint', 'manual'));
