-- +goose Up
-- Providers report a delay on every retry of one message, so a soft bounce is
-- counted per message: the key is the provider's message id, else our job id, else
-- the event id. Rows from before this migration each count as their own message.
ALTER TABLE soft_bounces ADD COLUMN message_key text;
UPDATE soft_bounces SET message_key = 'legacy:' || id;
ALTER TABLE soft_bounces ALTER COLUMN message_key SET NOT NULL;
CREATE UNIQUE INDEX soft_bounces_message_idx ON soft_bounces (account_id, email_lower, message_key);

-- +goose Down
DROP INDEX soft_bounces_message_idx;
ALTER TABLE soft_bounces DROP COLUMN message_key;
