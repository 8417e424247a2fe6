-- A message may name one of its account's senders (POST /v1/messages sender_id).
-- Each sender a message names gets a message stream of its own (campaigns.sender_id
-- set), so the executor routes, rate-limits and reports it exactly as a campaign of
-- that sender; the account's default stream (sender_id NULL) goes on sending through
-- the account's default sender. One live stream per (account, sender).
--
-- A sender's stream holds the sender (campaigns_sender_fk, RESTRICT) while it lives.
-- When the sender is deleted with nothing of its stream left to send, the stream is
-- retired: 'cancelled' and detached from the sender (its settled send rows stay, so
-- its messages keep their history). So a stream may now also be 'cancelled'.
-- messages.sender_id records what the request named; it has no foreign key, so the
-- message outlives its sender.

-- +goose Up
ALTER TABLE campaigns DROP CONSTRAINT campaigns_stream_sending;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_stream_sending
    CHECK (kind = 'campaign' OR status IN ('sending', 'cancelled'));
DROP INDEX campaigns_stream_idx;
CREATE UNIQUE INDEX campaigns_stream_idx ON campaigns (account_id, coalesce(sender_id, 0))
    WHERE kind = 'messages' AND status = 'sending';
ALTER TABLE messages ADD COLUMN sender_id bigint;

-- +goose Down
ALTER TABLE messages DROP COLUMN sender_id;
DELETE FROM campaigns WHERE kind = 'messages' AND (sender_id IS NOT NULL OR status <> 'sending');
DROP INDEX campaigns_stream_idx;
CREATE UNIQUE INDEX campaigns_stream_idx ON campaigns (account_id) WHERE kind = 'messages';
ALTER TABLE campaigns DROP CONSTRAINT campaigns_stream_sending;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_stream_sending CHECK (kind = 'campaign' OR status = 'sending');
