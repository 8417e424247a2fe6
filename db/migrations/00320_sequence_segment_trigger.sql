-- A sequence triggered by entering a segment: a confirmed subscriber who matches
-- segment_id while the sequence is active is enrolled (once per sequence, by the
-- enrollments' UNIQUE (sequence_id, subscriber_id)). The subscriber write paths
-- (create, update, confirm) test the one subscriber in their own transaction; the
-- sweep finds the rest (imports, list joins, segment edits) in chunks: each pass
-- reads at most a chunk of the account's subscribers after segment_sweep_after_id,
-- and segment_sweep_due_at is the row the executors claim it by (SKIP LOCKED, then
-- pushed ahead before the pass runs), so replicas never sweep the same sequence at
-- once and a full scan starts at most once a minute.

-- +goose Up
ALTER TABLE sequences DROP CONSTRAINT sequences_trigger_type_check;
ALTER TABLE sequences ADD CONSTRAINT sequences_trigger_type_check
    CHECK (trigger_type IN ('manual', 'list_joined', 'confirmed', 'event', 'date_attribute', 'segment_entered'));
ALTER TABLE sequences
    ADD COLUMN segment_id              bigint,
    ADD COLUMN segment_sweep_due_at    timestamptz,
    ADD COLUMN segment_sweep_after_id  bigint NOT NULL DEFAULT 0,
    -- A segment a sequence triggers on cannot be deleted (as one a campaign uses).
    ADD CONSTRAINT sequences_segment_fk FOREIGN KEY (account_id, segment_id) REFERENCES segments (account_id, id);
CREATE INDEX sequences_segment_sweep_idx ON sequences (segment_sweep_due_at)
    WHERE status = 'active' AND trigger_type = 'segment_entered';
CREATE INDEX sequences_segment_idx ON sequences (account_id) WHERE status = 'active' AND trigger_type = 'segment_entered';

-- +goose Down
DROP INDEX sequences_segment_idx;
DROP INDEX sequences_segment_sweep_idx;
DELETE FROM sequences WHERE trigger_type = 'segment_entered';
ALTER TABLE sequences DROP CONSTRAINT sequences_segment_fk;
ALTER TABLE sequences DROP COLUMN segment_id, DROP COLUMN segment_sweep_due_at, DROP COLUMN segment_sweep_after_id;
ALTER TABLE sequences DROP CONSTRAINT sequences_trigger_type_check;
ALTER TABLE sequences ADD CONSTRAINT sequences_trigger_type_check
    CHECK (trigger_type IN ('manual', 'list_joined', 'confirmed', 'event', 'date_attribute'));
