-- +goose Up
-- How the bounce mailbox was last read: 'idle' while a reader holds a connection
-- open and the server pushes new messages (RFC 2177 IDLE), 'poll' when the server
-- does not offer IDLE and the mailbox is read about once a minute; and when a
-- reader last logged in to it. NULL before the first reading.
ALTER TABLE bounce_mailboxes
    ADD COLUMN reader_mode       text CHECK (reader_mode IN ('idle', 'poll')),
    ADD COLUMN last_connected_at timestamptz;

-- +goose Down
ALTER TABLE bounce_mailboxes DROP COLUMN last_connected_at, DROP COLUMN reader_mode;
