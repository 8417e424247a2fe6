-- +goose Up
-- A message may name a sender pool instead of a sender (POST /v1/messages
-- pool_id). Each pool its messages name gets a message stream of its own
-- (campaigns.pool_id set, sender_id NULL), which the executor routes through the
-- pool exactly as a campaign naming the pool: its first usable sender, failing
-- over only rows refused before anything was handed over (docs/providers.md
-- "Sender pools and failover"). One live stream per (account, sender, pool).
-- The stream holds the pool (campaigns_pool_fk, RESTRICT) while it lives; the
-- pool's deletion retires it once nothing of it is left to send, as a sender's
-- deletion retires the sender's stream. messages.pool_id records what the
-- request named, without a foreign key: the message outlives its pool.
DROP INDEX campaigns_stream_idx;
CREATE UNIQUE INDEX campaigns_stream_idx ON campaigns (account_id, coalesce(sender_id, 0), coalesce(pool_id, 0))
    WHERE kind = 'messages' AND status = 'sending';
ALTER TABLE messages ADD COLUMN pool_id bigint,
    ADD CONSTRAINT messages_sender_or_pool CHECK (pool_id IS NULL OR sender_id IS NULL);

-- +goose Down
ALTER TABLE messages DROP CONSTRAINT messages_sender_or_pool, DROP COLUMN pool_id;
UPDATE campaigns SET status = 'cancelled', cancelled_at = now(), pool_id = NULL
WHERE kind = 'messages' AND pool_id IS NOT NULL;
DROP INDEX campaigns_stream_idx;
CREATE UNIQUE INDEX campaigns_stream_idx ON campaigns (account_id, coalesce(sender_id, 0))
    WHERE kind = 'messages' AND status = 'sending';
