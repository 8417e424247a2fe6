-- What a sequence step's templates see as .Event: the enrollment's data (the
-- trigger's event data, merged with the events it awaited) as it was when the
-- step's send was queued, keyed by the send's job id and written in the same
-- transaction as the send row. Only steps whose enrollment has data get a row; the
-- executor reads it when it renders a step whose templates use .Event.

-- +goose Up
CREATE TABLE sequence_send_data (
    job_id     text        PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    data       jsonb       NOT NULL CHECK (jsonb_typeof(data) = 'object'),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE sequence_send_data;
