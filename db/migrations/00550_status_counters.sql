-- Kept counters of a campaign's settled send statuses, so a report (and /stats)
-- reads them instead of counting a million rows (docs/reports.md). 'sent' is
-- already kept per domain in campaign_counts (SendAckMany); this table keeps the
-- other settled statuses. queued and sending rows are few once a campaign is done
-- and are counted from their partial indexes (sends_claim_idx, sends_lease_idx).
-- Each statement that moves a row into or out of one of these statuses adjusts the
-- count in its own statement, as the other kept counters are written: the claim
-- (suppressed, unknown), the acknowledgement (failed, unknown, cancelled, and a late
-- 'sent' taking a row out of unknown or failed), the releases (cancelled, and a
-- released unknown row), the rescuer (unknown, failed), the cancel sweep, the
-- failed-message hold, retry-failed (out of failed), the opt-out (suppressed) and
-- erasure (suppressed). Retention's deletes leave the counters alone: a report
-- reads the same after them.

-- +goose Up
CREATE TABLE campaign_status_counts (
    campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    status      text   NOT NULL CHECK (status IN ('failed', 'unknown', 'suppressed', 'cancelled')),
    n           bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, status)
);

-- The status a row had before the statement that last moved it: PostgreSQL 15's
-- UPDATE … RETURNING sees only the new row, and the acknowledgement and the
-- releases admit several starting statuses (a late 'sent' lands on a row the
-- rescuer settled). Set as status_before = s.status in the same SET, it is the
-- status the update really found, after any concurrent change it waited for.
ALTER TABLE sends ADD COLUMN status_before text;

-- +goose Down
ALTER TABLE sends DROP COLUMN status_before;
DROP TABLE campaign_status_counts;
