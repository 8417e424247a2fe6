-- The status counters (migration 00550) of the campaigns that existed before it:
-- counted from their live rows plus what retention archived
-- (campaign_send_archive). Apart from 00550, whose ALTER TABLE sends takes the
-- table's exclusive lock: this only reads sends, so it holds nothing the API
-- waits on while it scans. Recomputed whole, so running it again changes nothing.

-- +goose Up
INSERT INTO campaign_status_counts (campaign_id, account_id, status, n)
SELECT x.campaign_id, x.account_id, x.status, sum(x.n)
FROM (
    SELECT s.campaign_id, s.account_id, s.status, count(*) AS n FROM sends s
    WHERE s.status IN ('failed', 'unknown', 'suppressed', 'cancelled')
    GROUP BY 1, 2, 3
    UNION ALL
    SELECT a.campaign_id, a.account_id, a.status, a.n FROM campaign_send_archive a
    WHERE a.status IN ('failed', 'unknown', 'suppressed', 'cancelled')
) x
GROUP BY 1, 2, 3
ON CONFLICT (campaign_id, status) DO UPDATE SET n = excluded.n;

-- +goose Down
-- Nothing: 00550's Down drops the table; the counts computed here are the ones
-- the campaigns should have kept.
SELECT 1;
