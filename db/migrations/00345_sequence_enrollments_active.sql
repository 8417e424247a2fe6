-- A sequence's running enrollments, found without reading its ended ones: the
-- archive ends them 1,000 per statement (SequenceExitArchived), and the executors'
-- maintenance looks for archived sequences that still have any.

-- +goose Up
CREATE INDEX sequence_enrollments_active_idx ON sequence_enrollments (sequence_id) WHERE state = 'active';

-- +goose Down
DROP INDEX sequence_enrollments_active_idx;
