-- +goose Up
-- The recipient build leaves the transaction of the start: approved → building is
-- one short compare-and-set, the list is built in short transactions that each
-- insert a window of it, and building → sending (with the campaign.started event)
-- is another. A long transaction holding an id would keep every account's events
-- unreadable (readers stop below the oldest running transaction id).
-- building: the list is being built by build_executor_id; NULL there means its
-- builder is gone (ON DELETE SET NULL when its executors row is removed, as a dead
-- or stopped executor's is) and any executor takes the build over. A building
-- campaign is neither claimed nor finished, so a partial list is never sent as if whole.
-- failed: the campaign could not start (its segment cannot be evaluated, or its
-- build ran past the limit); failed_reason says why. It sent nothing.
ALTER TABLE campaigns DROP CONSTRAINT campaigns_status_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_status_check
    CHECK (status IN ('draft', 'approved', 'building', 'sending', 'paused', 'sent', 'cancelled', 'failed'));
ALTER TABLE campaigns
    ADD COLUMN build_executor_id bigint REFERENCES executors (id) ON DELETE SET NULL,
    ADD COLUMN failed_reason     text;
-- The foreign key's ON DELETE SET NULL looks builders up by executor.
CREATE INDEX campaigns_build_executor_idx ON campaigns (build_executor_id) WHERE build_executor_id IS NOT NULL;
CREATE INDEX campaigns_building_idx ON campaigns (id) WHERE status = 'building';

-- +goose Down
-- A building campaign goes back to approved (its partial list is kept: the old
-- build inserts with ON CONFLICT DO NOTHING); a failed one becomes cancelled.
UPDATE campaigns SET status = 'approved' WHERE status = 'building';
UPDATE campaigns SET status = 'cancelled', cancelled_at = coalesce(cancelled_at, now()) WHERE status = 'failed';
DROP INDEX campaigns_building_idx;
DROP INDEX campaigns_build_executor_idx;
ALTER TABLE campaigns DROP COLUMN failed_reason, DROP COLUMN build_executor_id;
ALTER TABLE campaigns DROP CONSTRAINT campaigns_status_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_status_check
    CHECK (status IN ('draft', 'approved', 'sending', 'paused', 'sent', 'cancelled'));
