-- +goose Up
-- How many subscribers of the target lists the recipient build left out, written by
-- the build itself (SendBuildRecipients): suppressed addresses, and of the rest those
-- not confirmed. NULL until the campaign is built (and for campaigns built before).
ALTER TABLE campaigns
    ADD COLUMN skipped_suppressed  bigint,
    ADD COLUMN skipped_unconfirmed bigint;

-- +goose Down
ALTER TABLE campaigns
    DROP COLUMN skipped_suppressed,
    DROP COLUMN skipped_unconfirmed;
