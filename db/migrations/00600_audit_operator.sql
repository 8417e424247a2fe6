-- +goose Up
-- The operator (its API and the `sendonce account` commands) is an actor of the
-- audit log: its actions on an account (create, quota change, suspend, resume,
-- delete) are entries of that account's log, written in the transaction of the
-- change, with actor_id 0 (the operator is no row of any table).
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check
    CHECK (actor_type IN ('user', 'key', 'session', 'operator'));

-- +goose Down
DELETE FROM audit_log WHERE actor_type = 'operator';
ALTER TABLE audit_log DROP CONSTRAINT audit_log_actor_type_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_type_check
    CHECK (actor_type IN ('user', 'key', 'session'));
