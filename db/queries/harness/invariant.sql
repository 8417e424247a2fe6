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
