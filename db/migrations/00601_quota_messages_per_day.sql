-- +goose Up
-- The messages-per-day quota (internal/quota): most messages the account's API may
-- accept per UTC day (POST /v1/messages, each item of a batch); NULL is no limit.
ALTER TABLE accounts ADD COLUMN quota_messages_per_day bigint CHECK (quota_messages_per_day >= 0);

-- What an account under that quota has accepted each UTC day: a kept counter,
-- raised in the transaction that accepts a message (QuotaMessagesTake), so the
-- check never counts the account's messages. Written only while the account has
-- the quota; one small row per account and day, gone with the account.
CREATE TABLE account_message_counts (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    day        date   NOT NULL,
    messages   bigint NOT NULL CHECK (messages >= 0),
    PRIMARY KEY (account_id, day)
);

-- +goose Down
DROP TABLE account_message_counts;
ALTER TABLE accounts DROP COLUMN quota_messages_per_day;
