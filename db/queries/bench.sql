-- Queries of `sendonce bench` only.

-- name: BenchSentAt :many
-- When the sampled rows were acknowledged: the ack statement's now(), which the bench
-- compares with the moment the fake provider accepted each message.
SELECT job_id, sent_at FROM sends
WHERE campaign_id = @campaign_id AND job_id = ANY(@job_ids::text[]) AND sent_at IS NOT NULL;

-- name: BenchCampaignSetSending :one
-- The raw loop's campaign skips the executor: approved → sending directly, so only
-- the claim and acknowledge statements are measured.
UPDATE campaigns SET status = 'sending', started_at = now(), updated_at = now()
WHERE id = @id AND status = 'approved'
RETURNING id, account_id, list_ids;

-- name: BenchBuildRecipients :execrows
-- DRAFT until the executor's SendBuildRecipients is on main.
INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id)
SELECT DISTINCT ON (s.email_lower)
       @campaign_id::bigint, s.account_id, s.id, s.email, s.email_lower,
       'campaign:' || @campaign_id::bigint || ':' || s.id
FROM subscribers s
WHERE s.account_id = @account_id AND s.status = 'confirmed'
  AND NOT EXISTS (SELECT 1 FROM suppressions x
                  WHERE x.account_id = s.account_id AND x.email_lower = s.email_lower)
ORDER BY s.email_lower, s.created_at, s.id
ON CONFLICT (campaign_id, subscriber_id) DO NOTHING;

-- name: BenchClaimBatch :many
-- DRAFT until the executor's SendClaimBatch is on main: claim and mark suppressed rows
-- in one statement (DESIGN.md §4).
WITH picked AS (
    SELECT s.id FROM sends s
    WHERE s.campaign_id = @campaign_id AND s.status = 'queued' AND s.next_attempt_at <= now()
    ORDER BY s.id
    LIMIT @n
    FOR UPDATE OF s SKIP LOCKED
), judged AS (
    SELECT p.id, (sub.id IS NULL OR EXISTS (
               SELECT 1 FROM suppressions x
               WHERE x.account_id = s.account_id AND x.email_lower = s.email_lower)) AS blocked
    FROM picked p
    JOIN sends s ON s.id = p.id
    LEFT JOIN subscribers sub ON sub.id = s.subscriber_id AND sub.status = 'confirmed'
)
UPDATE sends s
SET status = CASE WHEN j.blocked THEN 'suppressed' ELSE 'sending' END,
    lease_until = CASE WHEN j.blocked THEN NULL ELSE now() + interval '2 minutes' END,
    attempts = CASE WHEN j.blocked THEN s.attempts ELSE s.attempts + 1 END,
    updated_at = now()
FROM judged j
WHERE s.id = j.id
RETURNING s.id, s.status;

-- name: BenchAckMany :execrows
-- DRAFT until the executor's SendAckMany is on main.
UPDATE sends s
SET status = 'sent', provider_message_id = u.provider_id, sent_at = now(),
    lease_until = NULL, updated_at = now()
FROM (SELECT unnest(@ids::bigint[]) AS id, unnest(@provider_ids::text[]) AS provider_id) AS u
WHERE s.id = u.id AND s.status = 'sending';

-- name: BenchVacuumAnalyze :exec
-- Fresh statistics and a clean visibility map between phases, as autovacuum would
-- give shortly after bulk writes, so each phase starts from the same state.
VACUUM ANALYZE subscribers, sends;
