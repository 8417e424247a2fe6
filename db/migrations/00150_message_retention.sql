-- Message retention (SENDONCE_MESSAGE_RETENTION): maintenance deletes the settled
-- messages accepted longer ago than the retention, oldest first, in small batches
-- (MessageDeleteRetired). This index lets each batch start at the oldest message
-- instead of walking the messages kept.

-- +goose Up
CREATE INDEX messages_created_at_idx ON messages (created_at, id);

-- +goose Down
DROP INDEX messages_created_at_idx;
