-- An event per acknowledgement, not per recipient: the outcomes one acknowledgement
-- of the executor settles for one account (send.sent, send.failed, send.unknown) are
-- one row, its data an array with one element per recipient, each the payload the
-- event row had (the type is 'send.' || its status). It commits in the
-- acknowledgement's statement as the rows did (the outbox rule, DESIGN.md §10), and
-- costs one heap tuple and two index entries per batch instead of a tuple and two
-- entries per recipient.
--
-- Readers see one event per element, with an id of its own: events' id sequence
-- now steps by 1024, so each nextval owns the window [v, v + 1024); an event row
-- takes v, a batch of n ≤ 1024 elements takes v .. v + n - 1 (first_id + index).
-- The windows never overlap, so the batch that may hold an id is the one with the
-- greatest first_id at or below it (the primary key), and within a transaction
-- (one xid) element ids rise in the order the statements wrote them: the reading
-- order (xid, id) is the events' own.
-- +goose Up
CREATE TABLE event_batches (
    first_id    bigint      PRIMARY KEY,
    account_id  bigint      NOT NULL,
    xid         bigint      NOT NULL DEFAULT pg_current_xact_id()::text::bigint,
    occurred_at timestamptz NOT NULL,
    n           int         NOT NULL CHECK (n BETWEEN 1 AND 1024),
    -- The distinct types of its elements: a type filter passes over a batch without one.
    types       text[]      NOT NULL,
    -- jsonb[], not a JSON array: the payloads go in as they are (jsonb_agg would
    -- take each apart and write the whole again, which cost more than the rows saved).
    data        jsonb[]     NOT NULL
);
-- lz4 where the server has it (a build without it keeps pglz): a batch's payloads
-- go out of line to TOAST, and pglz's compression cost as much as the rows saved.
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE 'ALTER TABLE event_batches ALTER COLUMN data SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    NULL;
END
$$;
-- +goose StatementEnd
-- The reading order, as events_account_order_idx (a batch's elements share its xid).
CREATE INDEX event_batches_account_order_idx ON event_batches (account_id, xid, first_id);
CREATE INDEX event_batches_occurred_brin ON event_batches USING brin (occurred_at);

-- The step is taken first, then the sequence moved past every id given so far by
-- a margin: a nextval between the two (an older release writing events during the
-- migration) cannot reach a window given after.
ALTER SEQUENCE events_id_seq INCREMENT BY 1024;
SELECT setval('events_id_seq', (s.last_value / 1024 + 1024) * 1024) FROM events_id_seq s;

-- Deleting an account deletes its batches with its events (00211: neither table
-- has a foreign key, so the cascade is this trigger's).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION events_delete_of_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM events WHERE account_id IN (SELECT id FROM deleted_accounts);
    DELETE FROM event_batches WHERE account_id IN (SELECT id FROM deleted_accounts);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- A process that reads batches says so when it registers: until every registered
-- executor does (an older release beside this one during a rolling upgrade, whose
-- fan-out and API would pass over a batch), acknowledgements write a row per event.
ALTER TABLE executors ADD COLUMN reads_event_batches boolean NOT NULL DEFAULT false;

-- Every event, one row per event, for reading by hand (and in tests): the product's
-- readers page the two tables themselves (events.sql).
CREATE VIEW all_events AS
SELECT e.id, e.account_id, e.type, e.occurred_at, e.data, e.xid FROM events e
UNION ALL
SELECT b.first_id + u.k - 1, b.account_id, 'send.' || (u.data ->> 'status'), b.occurred_at, u.data, b.xid
FROM event_batches b CROSS JOIN LATERAL unnest(b.data) WITH ORDINALITY AS u (data, k);

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION events_delete_of_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM events WHERE account_id IN (SELECT id FROM deleted_accounts);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
DROP VIEW all_events;
ALTER TABLE executors DROP COLUMN reads_event_batches;
ALTER SEQUENCE events_id_seq INCREMENT BY 1;
DROP TABLE event_batches;
