-- +goose Up
-- Accounts as tenants of an operator (docs/operations.md, Operating accounts).
-- suspended_at: the account's keys and sessions are refused (403) and none of its
-- work is claimed until it is resumed. deleted_at: the account is gone from the
-- API at once; the account purger removes its rows in batches, then the account.
-- The quotas are NULL for "no limit".
ALTER TABLE accounts
    ADD COLUMN suspended_at timestamptz,
    ADD COLUMN deleted_at timestamptz,
    ADD COLUMN quota_subscribers bigint CHECK (quota_subscribers >= 0),
    ADD COLUMN quota_senders bigint CHECK (quota_senders >= 0);

-- The accounts the purger still has to remove (few, usually none).
CREATE INDEX accounts_deleted_idx ON accounts (id) WHERE deleted_at IS NOT NULL;

-- +goose Down
DROP INDEX accounts_deleted_idx;
ALTER TABLE accounts
    DROP COLUMN suspended_at, DROP COLUMN deleted_at, DROP COLUMN quota_subscribers,
    DROP COLUMN quota_senders;
