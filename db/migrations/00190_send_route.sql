-- +goose Up
-- What a row is sent through is recorded at claim, so the rescuer never judges an
-- interrupted send by today's configuration (a default sender changed or deleted
-- since, the environment's provider): via_sender_id (NULL: the environment's
-- provider), via_provider (the sender type, or the environment's provider name)
-- and via_idempotent (whether that provider drops a replay of the job id). Rows
-- claimed before this migration have NULL there and are treated as not
-- idempotent: their campaign's ambiguous_policy decides, no replay is guessed.
-- in_doubt: a send of the row may have been delivered (an ambiguous answer or an
-- interrupted send, requeued for a replay); such a row is replayed only through
-- the route recorded on it, never through another provider that could not
-- recognise the replay.
-- left_list: the recipient left every list that made them one while the row was
-- unsettled; the claim marks it suppressed whatever state it came back from.
-- Constant defaults: adding the columns rewrites nothing.
ALTER TABLE sends
    ADD COLUMN via_sender_id  bigint,
    ADD COLUMN via_provider   text,
    ADD COLUMN via_idempotent boolean,
    ADD COLUMN in_doubt       boolean NOT NULL DEFAULT false,
    ADD COLUMN left_list      boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE sends
    DROP COLUMN via_sender_id, DROP COLUMN via_provider, DROP COLUMN via_idempotent,
    DROP COLUMN in_doubt, DROP COLUMN left_list;
