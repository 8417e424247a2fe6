-- The delivery invariants every executor test and `sendonce-harness chaos` end with
-- (internal/invariant). Not tenant queries: they read every campaign of a test's
-- own database, and no request can reach them.

-- name: InvariantCampaignCounts :many
-- Every started campaign with its rows by status. A finished campaign (sent,
-- cancelled or failed) must hold no queued or sending row: no statement may leave work in a
-- campaign nobody sends any more (DESIGN.md §4). total is counted apart from the
-- statuses, so a row in a status the counts miss shows up as a difference.
SELECT c.id, c.status,
       count(s.id)::bigint                                    AS total,
       count(*) FILTER (WHERE s.status = 'queued')::bigint     AS queued,
       count(*) FILTER (WHERE s.status = 'sending')::bigint    AS sending,
       count(*) FILTER (WHERE s.status = 'sent')::bigint       AS sent,
       count(*) FILTER (WHERE s.status = 'failed')::bigint     AS failed,
       count(*) FILTER (WHERE s.status = 'suppressed')::bigint AS suppressed,
       count(*) FILTER (WHERE s.status = 'cancelled')::bigint  AS cancelled,
       count(*) FILTER (WHERE s.status = 'unknown')::bigint    AS unknown
FROM campaigns c
JOIN sends s ON s.campaign_id = c.id
GROUP BY c.id, c.status
ORDER BY c.id;

-- name: InvariantSentJobIDs :many
-- The job ids recorded as sent: each must have reached the provider.
SELECT job_id FROM sends WHERE status = 'sent' ORDER BY job_id;

-- name: InvariantKeptCounts :many
-- The kept status counters of every campaign (kind campaign) that differ from a
-- full recount of its rows: live rows plus those retention archived
-- (campaign_send_archive). sent is kept in campaign_counts (summed over domains),
-- the other settled statuses in campaign_status_counts; queued and sending are
-- always counted from the rows, so they have no counter to check. No row: every
-- counter equals its recount.
WITH recount AS (
    SELECT x.campaign_id, x.status, sum(x.n)::bigint AS n FROM (
        SELECT s.campaign_id, s.status, count(*) AS n FROM sends s
        WHERE s.status IN ('sent', 'failed', 'unknown', 'suppressed', 'cancelled')
        GROUP BY 1, 2
        UNION ALL
        SELECT a.campaign_id, a.status, a.n FROM campaign_send_archive a
    ) x
    GROUP BY 1, 2
), kept AS (
    SELECT k.campaign_id, k.status, k.n FROM campaign_status_counts k
    UNION ALL
    SELECT cc.campaign_id, 'sent', sum(cc.sent)::bigint FROM campaign_counts cc GROUP BY 1
)
SELECT c.id, st.status::text AS status, coalesce(r.n, 0)::bigint AS recounted, coalesce(k.n, 0)::bigint AS kept
FROM campaigns c
CROSS JOIN unnest(ARRAY['sent', 'failed', 'unknown', 'suppressed', 'cancelled']) st (status)
LEFT JOIN recount r ON r.campaign_id = c.id AND r.status = st.status
LEFT JOIN kept k ON k.campaign_id = c.id AND k.status = st.status
WHERE c.kind = 'campaign' AND coalesce(r.n, 0) <> coalesce(k.n, 0)
ORDER BY c.id, st.status;
