-- Sequence retention (SENDONCE_SEQUENCE_RETENTION): the executors' maintenance
-- deletes, for enrollments that ended longer ago than the retention, their step
-- sends (settled ones), the sends' event data and their step log lines, and the
-- tracked events older than it. The enrollment rows stay: they are what keeps a
-- subscriber enrolled once per sequence.

-- +goose Up
CREATE INDEX sequence_enrollments_finished_idx ON sequence_enrollments (finished_at) WHERE state <> 'active';
CREATE INDEX track_events_created_idx ON track_events (created_at);

-- +goose Down
DROP INDEX track_events_created_idx;
DROP INDEX sequence_enrollments_finished_idx;
