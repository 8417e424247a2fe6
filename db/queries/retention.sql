-- Retention of finished campaigns' send rows (SENDONCE_SEND_RETENTION).

-- name: CampaignListRetired :many
-- Finished (sent or cancelled) campaigns that ended more than `retention` ago and
-- still have settled send rows to delete.
SELECT c.id FROM campaigns c
WHERE c.status IN ('sent', 'cancelled')
  AND coalesce(c.finished_at, c.cancelled_at) < coalesce(sqlc.narg('now')::timestamptz, now()) - @retention::interval
  AND EXISTS (SELECT 1 FROM sends s
              WHERE s.campaign_id = c.id AND s.status IN ('sent', 'failed', 'suppressed', 'cancelled', 'unknown'))
ORDER BY coalesce(c.finished_at, c.cancelled_at), c.id
LIMIT 100;

-- name: SendDeleteRetired :one
-- Deletes up to `n` settled rows of one finished campaign and adds them to the
-- campaign's archived counts in the same statement, so the stats never miss or
-- double-count a row. Rows still queued or in flight (a cancelled campaign's last
-- leases) stay until they settle. SKIP LOCKED keeps replicas off each other's batch.
WITH doomed AS (
    SELECT s.id FROM sends s
    WHERE s.campaign_id = @campaign_id
      AND s.status IN ('sent', 'failed', 'suppressed', 'cancelled', 'unknown')
    LIMIT @n
    FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM sends s USING doomed d
    WHERE s.id = d.id
    RETURNING s.campaign_id, s.account_id, s.status
), counted AS (
    INSERT INTO campaign_send_archive (campaign_id, account_id, status, n)
    SELECT g.campaign_id, g.account_id, g.status, count(*) FROM gone g GROUP BY 1, 2, 3
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = campaign_send_archive.n + excluded.n
)
SELECT count(*) FROM gone;
