-- +goose Up
-- Liveness of executor processes. Each running executor has one row and refreshes
-- heartbeat_at every few seconds (on the database's clock, so no replica's clock
-- skew matters); the rows it claims carry its id. Rows held by an executor whose
-- heartbeat stopped (killed, crashed) are rescued within a few heartbeats instead of
-- when their lease runs out; the lease stays the bound for a process that is alive
-- but frozen. A graceful shutdown deletes the row.
CREATE TABLE executors (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    host         text        NOT NULL,
    pid          integer     NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);

-- No foreign key: a claim must not pay for a key check, and an executor's row is
-- deleted while rows it held may still be 'sending' (they are then rescued at once).
ALTER TABLE sends ADD COLUMN executor_id bigint;

-- +goose Down
ALTER TABLE sends DROP COLUMN executor_id;
DROP TABLE executors;
