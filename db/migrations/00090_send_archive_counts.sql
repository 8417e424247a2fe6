-- Per-campaign counts of send rows deleted by retention (SENDONCE_SEND_RETENTION):
-- the statement that deletes a batch of a finished campaign's rows adds them here
-- in the same statement, so live rows plus these counts always give the campaign's
-- totals by status.

-- +goose Up
CREATE TABLE campaign_send_archive (
    campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    status      text   NOT NULL,
    n           bigint NOT NULL CHECK (n >= 0),
    PRIMARY KEY (campaign_id, status)
);
-- Finished campaigns by the time they finished, for the retention sweep.
CREATE INDEX campaigns_finished_idx ON campaigns (coalesce(finished_at, cancelled_at))
    WHERE status IN ('sent', 'cancelled');

-- +goose Down
DROP INDEX campaigns_finished_idx;
DROP TABLE campaign_send_archive;
