-- Re-entry: a sequence with reentry = 'after_exit' may run again for a subscriber
-- whose enrollment ended (completed, or exited for a reason that is not an
-- opt-out), when a new trigger comes at least reentry_after after it ended. The
-- enrollment row stays one per (sequence, subscriber) and counts its runs; a
-- trigger while it runs changes nothing.
--
-- Each run's step sends stay exactly once: run 1 keeps the job id
-- 'sequence:<sequence>:<step>:<subscriber>', a later run r is
-- 'sequence:<sequence>:<step>:<subscriber>:<r>'. A send row is unique per
-- (campaign, subscriber), so run r's sends go to the step's campaign for that run
-- (sequence_steps gains run; run 1's campaigns are the existing ones), made when
-- the first enrollment of that run reaches the step.

-- +goose Up
ALTER TABLE sequences
    ADD COLUMN reentry       text NOT NULL DEFAULT 'never' CHECK (reentry IN ('never', 'after_exit')),
    ADD COLUMN reentry_after interval;
ALTER TABLE sequence_enrollments ADD COLUMN run integer NOT NULL DEFAULT 1 CHECK (run >= 1);
ALTER TABLE sequence_step_log ADD COLUMN run integer NOT NULL DEFAULT 1;
ALTER TABLE sequence_steps ADD COLUMN run integer NOT NULL DEFAULT 1 CHECK (run >= 1);
ALTER TABLE sequence_steps DROP CONSTRAINT sequence_steps_pkey;
ALTER TABLE sequence_steps ADD PRIMARY KEY (sequence_id, position, run);

-- +goose Down
DELETE FROM campaigns c USING sequence_steps st WHERE st.run > 1 AND c.id = st.campaign_id;
DELETE FROM sequence_steps WHERE run > 1;
ALTER TABLE sequence_steps DROP CONSTRAINT sequence_steps_pkey;
ALTER TABLE sequence_steps ADD PRIMARY KEY (sequence_id, position);
ALTER TABLE sequence_steps DROP COLUMN run;
ALTER TABLE sequence_step_log DROP COLUMN run;
ALTER TABLE sequence_enrollments DROP COLUMN run;
ALTER TABLE sequences DROP COLUMN reentry, DROP COLUMN reentry_after;
