-- The per-recipient rows of a campaign: build, claim, acknowledge, rescue.

-- name: SendBuildRecipients :execrows
-- The recipient list, built once in the transaction of CampaignStart. DISTINCT ON
-- (email_lower) sends one message per address even when it sits in several target
-- lists; ON CONFLICT makes a rebuild create nothing new. Only confirmed, unsuppressed
-- subscribers join; an empty list_ids means every confirmed subscriber of the account.
INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id)
SELECT DISTINCT ON (s.email_lower)
       @campaign_id::bigint, s.account_id, s.id, s.email, s.email_lower,
       'campaign:' || @campaign_id::bigint || ':' || s.id
FROM subscribers s
WHERE s.account_id = @account_id
  AND s.status = 'confirmed'
  AND (cardinality(@list_ids::bigint[]) = 0 OR EXISTS (
      SELECT 1 FROM list_members m
      WHERE m.subscriber_id = s.id AND m.account_id = @account_id
        AND m.list_id = ANY(@list_ids::bigint[])))
  AND NOT EXISTS (
      SELECT 1 FROM suppressions x
      WHERE x.account_id = s.account_id AND x.email_lower = s.email_lower)
ORDER BY s.email_lower, s.created_at, s.id
ON CONFLICT (campaign_id, subscriber_id) DO NOTHING;

-- name: SendClaimBatch :many
-- One statement claims a disjoint batch (SKIP LOCKED) of one campaign's due rows,
-- oldest due first: (next_attempt_at, id) is an order only the partial index
-- sends_claim_idx yields, so the plan cannot drift to the primary key plus a filter
-- (migration 00030); fresh rows are due at -infinity, so they go out in id order. Rows whose
-- address is now suppressed, or whose subscriber is no longer confirmed (or was
-- deleted), are MARKED suppressed here rather than filtered out: a filtered row would
-- stay queued at the head of the index and every later claim would walk over it
-- again (DESIGN.md §4). The campaign guard makes pause and cancel stop new claims.
WITH picked AS (
    SELECT s.id FROM sends s
    WHERE s.campaign_id = @campaign_id
      AND s.status = 'queued'
      AND s.next_attempt_at <= coalesce(sqlc.narg('now')::timestamptz, now())
      AND EXISTS (SELECT 1 FROM campaigns c WHERE c.id = @campaign_id AND c.status = 'sending')
    ORDER BY s.next_attempt_at, s.id
    LIMIT @n
    FOR UPDATE OF s SKIP LOCKED
), judged AS (
    SELECT p.id, sub.name, sub.attributes,
           (sub.id IS NULL OR EXISTS (
               SELECT 1 FROM suppressions x
               WHERE x.account_id = s.account_id AND x.email_lower = s.email_lower)) AS blocked
    FROM picked p
    JOIN sends s ON s.id = p.id
    LEFT JOIN subscribers sub ON sub.id = s.subscriber_id AND sub.status = 'confirmed'
)
UPDATE sends s
SET status      = CASE WHEN j.blocked THEN 'suppressed' ELSE 'sending' END,
    lease_until = CASE WHEN j.blocked THEN NULL
                       ELSE coalesce(sqlc.narg('now')::timestamptz, now()) + @lease::interval END,
    attempts    = CASE WHEN j.blocked THEN s.attempts ELSE s.attempts + 1 END,
    updated_at  = coalesce(sqlc.narg('now')::timestamptz, now())
FROM judged j
WHERE s.id = j.id
RETURNING s.id, s.account_id, s.subscriber_id, s.email, s.job_id, s.status, s.attempts,
          coalesce(j.name, '')::text AS name, coalesce(j.attributes, '{}')::jsonb AS attributes;

-- name: SendAckMany :execrows
-- The completer's coalesced acknowledgement: one statement for every outcome of a
-- few milliseconds of sends across all workers. The status = 'sending' fence keeps a
-- late ack from overwriting a rescue, a release or a cancel.
UPDATE sends s
SET status              = u.status,
    provider_message_id = coalesce(nullif(u.provider_id, ''), s.provider_message_id),
    last_error          = nullif(u.error, ''),
    next_attempt_at     = coalesce(u.next_attempt_at, s.next_attempt_at),
    sent_at             = CASE WHEN u.status = 'sent' THEN coalesce(sqlc.narg('now')::timestamptz, now()) END,
    lease_until         = NULL,
    updated_at          = coalesce(sqlc.narg('now')::timestamptz, now())
FROM (
    -- Set-returning functions in one select list zip element by element (PostgreSQL 10+).
    SELECT unnest(@ids::bigint[]) AS id, unnest(@statuses::text[]) AS status,
           unnest(@provider_ids::text[]) AS provider_id, unnest(@errors::text[]) AS error,
           unnest(@next_attempts::timestamptz[]) AS next_attempt_at
) AS u
WHERE s.id = u.id AND s.status = 'sending';

-- name: SendReleaseMany :execrows
-- Shutdown hands claimed rows that were never sent back to the queue; the attempt
-- they were charged did not happen.
UPDATE sends
SET status = 'queued', lease_until = NULL, attempts = greatest(attempts - 1, 0),
    updated_at = now()
WHERE id = ANY(@ids::bigint[]) AND status = 'sending';

-- name: SendRescueExpired :many
-- Rows whose lease expired while sending were in flight when a process died. An
-- idempotent provider drops a replay of the same job id, so they are requeued;
-- otherwise the campaign's ambiguous_policy decides: retry requeues, skip marks
-- them unknown so no second copy is risked.
WITH expired AS (
    SELECT s.id FROM sends s
    WHERE s.status = 'sending' AND s.lease_until < coalesce(sqlc.narg('now')::timestamptz, now())
    ORDER BY s.lease_until
    LIMIT 1000
    FOR UPDATE SKIP LOCKED
)
UPDATE sends s
SET status = CASE WHEN @idempotent::bool OR c.ambiguous_policy = 'retry' THEN 'queued' ELSE 'unknown' END,
    lease_until = NULL,
    last_error = 'lease expired while sending',
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
FROM expired e, campaigns c
WHERE s.id = e.id AND c.id = s.campaign_id
RETURNING s.id, s.campaign_id, s.status;

-- name: SendSweepCancelled :execrows
-- The cancel transition (SendCancelQueued) closes the queued rows in its own
-- transaction; a row in flight at that moment can still come back to queued (a
-- temporary failure, a rescued lease). This sweep closes those, in bounded batches.
UPDATE sends
SET status = 'cancelled', updated_at = now()
WHERE id IN (
    SELECT s.id FROM sends s
    WHERE s.campaign_id = @campaign_id AND s.status = 'queued'
    ORDER BY s.id
    LIMIT 5000
    FOR UPDATE SKIP LOCKED)
  AND status = 'queued';

-- name: SendCountQueued :one
-- The queued-rows gauge: an index-only count over the partial claim index.
SELECT count(*) FROM sends WHERE status = 'queued';

-- name: SendCountByStatus :many
-- Per-status counts of one campaign (tests and the chaos report).
SELECT status, count(*) AS n FROM sends WHERE campaign_id = @campaign_id GROUP BY status ORDER BY status;
