-- +goose Up
-- Click and open tracking of single messages (POST /v1/messages, docs/engagement.md).
-- Off unless the request (or its template) asks: a receipt or a password reset is
-- not a campaign, and rewriting its links is the sender's choice.
ALTER TABLE messages
    ADD COLUMN track_clicks boolean NOT NULL DEFAULT false,
    ADD COLUMN track_opens  boolean NOT NULL DEFAULT false;
-- A template's default for the messages made from it; a message's own
-- track_clicks overrides it.
ALTER TABLE templates ADD COLUMN track_clicks boolean NOT NULL DEFAULT false;

-- The original URLs of a tracked message's links, stored when it is accepted (in
-- the same transaction), numbered from 1 like a campaign's tracked_links. They go
-- with their message: retention deleting it deletes them.
CREATE TABLE message_links (
    account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    idx        int    NOT NULL CHECK (idx BETWEEN 1 AND 1000),
    url        text   NOT NULL CHECK (length(url) <= 2048),
    PRIMARY KEY (message_id, idx)
);

-- A message's hits: campaign_id is its stream, send_id its send row, message_id the
-- message (deleted with it, unlike a campaign's hits, which outlive their send rows
-- for the campaign's stats).
ALTER TABLE tracking_hits ADD COLUMN message_id bigint REFERENCES messages (id) ON DELETE CASCADE;
CREATE INDEX tracking_hits_message_idx ON tracking_hits (message_id) WHERE message_id IS NOT NULL;

-- +goose Down
DROP INDEX tracking_hits_message_idx;
ALTER TABLE tracking_hits DROP COLUMN message_id;
DROP TABLE message_links;
ALTER TABLE templates DROP COLUMN track_clicks;
ALTER TABLE messages DROP COLUMN track_opens, DROP COLUMN track_clicks;
