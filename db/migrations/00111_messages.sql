-- Transactional messages. A message is one send row, sent by the executor like any
-- campaign's (claim, lease, provider call keyed by job_id, batched ack, rescuer,
-- retries, ambiguous_policy), in a per-account stream: a campaigns row of kind
-- 'messages' that is always 'sending' and never finishes. The stream's send rows
-- carry the message's id in subscriber_id (unique per campaign, and sends has no
-- foreign key there), and job_id 'message:<account>:<Idempotency-Key>', which is
-- unique: one key, one message, for as long as the message exists.

-- +goose Up
ALTER TABLE campaigns ADD COLUMN kind text NOT NULL DEFAULT 'campaign' CHECK (kind IN ('campaign', 'messages'));
-- A stream is never paused, cancelled or finished: whatever statement tries fails.
ALTER TABLE campaigns ADD CONSTRAINT campaigns_stream_sending CHECK (kind = 'campaign' OR status = 'sending');
CREATE UNIQUE INDEX campaigns_stream_idx ON campaigns (account_id) WHERE kind = 'messages';

CREATE TABLE messages (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    idempotency_key text        NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    -- SHA-256 of the request as accepted: the same key with another body is refused.
    request_hash    bytea       NOT NULL CHECK (length(request_hash) = 32),
    category        text        NOT NULL CHECK (category IN ('transactional', 'marketing')),
    to_email        text        NOT NULL,
    to_name         text        NOT NULL DEFAULT '',
    from_email      text        NOT NULL,
    from_name       text        NOT NULL DEFAULT '',
    reply_to        text        NOT NULL DEFAULT '',
    -- The content as templates (a template's, copied when the message is accepted,
    -- or inline), rendered with data at send time by the same builder as campaigns.
    subject         text        NOT NULL,
    html            text        NOT NULL DEFAULT '',
    text            text        NOT NULL DEFAULT '',
    data            jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object'),
    template_id     bigint      REFERENCES templates (id) ON DELETE SET NULL,
    -- Extra headers from the API's whitelist, as [{"name": …, "value": …}].
    headers         jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(headers) = 'array'),
    tags            text[]      NOT NULL DEFAULT '{}',
    send_at         timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, idempotency_key)
);
-- Listing per account (newest last, keyset on id) and by recipient or tag.
CREATE INDEX messages_account_id_idx ON messages (account_id, id);
CREATE INDEX messages_to_idx ON messages (account_id, lower(to_email), id);
CREATE INDEX messages_tags_idx ON messages USING gin (tags);

-- +goose Down
DROP TABLE messages;
DELETE FROM campaigns WHERE kind = 'messages';
ALTER TABLE campaigns DROP CONSTRAINT campaigns_stream_sending;
ALTER TABLE campaigns DROP COLUMN kind;
