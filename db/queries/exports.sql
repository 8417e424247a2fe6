-- Streamed exports (internal/export): each is read in keyset batches inside one
-- REPEATABLE READ, READ ONLY transaction, so every batch sees the same snapshot
-- (the export is consistent) while no batch holds more than @lim rows in memory,
-- and the transaction never gets an xid, so the events' readers, which stop
-- below the oldest transaction id still running, are not held back by it.

-- name: ExportSubscribers :many
-- The list page's filters (SubscriberList).
SELECT s.id, s.email, s.name, s.status, s.attributes, s.created_at, s.updated_at FROM subscribers s
WHERE s.account_id = @account_id
  AND s.id > @after_id
  AND (sqlc.narg('status')::text IS NULL OR s.status = sqlc.narg('status')::text)
  AND (sqlc.narg('email_prefix')::text IS NULL OR s.email_lower LIKE sqlc.narg('email_prefix')::text || '%')
  AND (sqlc.narg('list_id')::bigint IS NULL OR EXISTS (
        SELECT 1 FROM list_members m
        WHERE m.account_id = @account_id AND m.list_id = sqlc.narg('list_id')::bigint AND m.subscriber_id = s.id
          AND m.status = ANY(@membership_statuses::text[])))
ORDER BY s.id
LIMIT @lim;

-- name: ExportCampaignRecipients :many
-- A campaign's recipients with their outcome and engagement (hits by send:
-- tracking_hits_send_idx).
SELECT s.id, s.subscriber_id, s.email, s.status, s.attempts, s.sent_at, s.feedback, s.last_error,
       coalesce(h.opens, 0)::bigint AS opens, coalesce(h.human_opens, 0)::bigint AS human_opens,
       coalesce(h.clicks, 0)::bigint AS clicks, coalesce(h.human_clicks, 0)::bigint AS human_clicks
FROM sends s
LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE x.kind = 'open') AS opens,
           count(*) FILTER (WHERE x.kind = 'open' AND NOT x.suspected_bot) AS human_opens,
           count(*) FILTER (WHERE x.kind = 'click' AND x.link_idx > 0) AS clicks,
           count(*) FILTER (WHERE x.kind = 'click' AND x.link_idx > 0 AND NOT x.suspected_bot) AS human_clicks
    FROM tracking_hits x WHERE x.send_id = s.id) h ON true
WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.id > @after_id
ORDER BY s.id
LIMIT @lim;

-- name: ExportCampaignExists :one
SELECT EXISTS (SELECT 1 FROM campaigns WHERE account_id = @account_id AND id = @id AND kind = 'campaign');

-- name: ExportSuppressions :many
SELECT email_lower, reason, source, created_at FROM suppressions
WHERE account_id = @account_id AND email_lower > @after_email
ORDER BY email_lower
LIMIT @lim;

-- name: ExportMessages :many
-- The messages list's filters (MessageList): the send's status, the whole address, a tag.
SELECT m.id, m.to_email, m.from_email, m.subject, m.category, m.tags, m.created_at,
       s.status, s.sent_at, s.feedback
FROM messages m
LEFT JOIN sends s ON s.job_id = 'message:' || m.account_id || ':' || m.idempotency_key AND s.job_id NOT LIKE 'campaign:%'
WHERE m.account_id = @account_id AND m.id > @after_id
  AND (sqlc.narg('status')::text IS NULL OR s.status = sqlc.narg('status')::text)
  AND (sqlc.narg('to_email')::text IS NULL OR lower(m.to_email) = lower(sqlc.narg('to_email')::text))
  AND (sqlc.narg('tag')::text IS NULL OR m.tags @> ARRAY[sqlc.narg('tag')::text])
ORDER BY m.id
LIMIT @lim;

-- name: ExportEvents :many
-- In the events' reading order (xid, id), on events_account_order_idx and
-- event_batches_account_order_idx, merged as EventListAfter merges them.
WITH batches AS (
    SELECT b.first_id, b.xid, b.occurred_at, b.data,
           coalesce(sum(CASE WHEN (b.xid, b.first_id) <= (@after_xid::bigint, @after_id::bigint) THEN 0 ELSE b.n END)
                    OVER (ORDER BY b.xid, b.first_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM (SELECT b.first_id, b.xid, b.occurred_at, b.n, b.data FROM event_batches b
          WHERE b.account_id = @account_id
            AND (b.xid, b.first_id) > (@after_xid::bigint, sqlc.arg('after_id')::bigint - 1024)
          ORDER BY b.xid, b.first_id
          LIMIT sqlc.arg('lim')::int + 1) b
)
SELECT x.id, x.type, x.occurred_at, x.data, x.xid FROM (
    (SELECT e.id, e.type, e.occurred_at, e.data, e.xid FROM events e
     WHERE e.account_id = @account_id AND (e.xid, e.id) > (@after_xid::bigint, @after_id::bigint)
     ORDER BY e.xid, e.id
     LIMIT sqlc.arg('lim')::int)
    UNION ALL
    SELECT b.first_id + u.k - 1, 'send.' || (u.data ->> 'status'), b.occurred_at, u.data, b.xid
    FROM batches b CROSS JOIN LATERAL unnest(b.data) WITH ORDINALITY AS u (data, k)
    WHERE b.before < sqlc.arg('lim')::int
      AND (b.xid, b.first_id + u.k - 1) > (@after_xid::bigint, @after_id::bigint)
) x
ORDER BY x.xid, x.id
LIMIT sqlc.arg('lim')::int;

-- name: ExportReadInOrder :exec
-- For the rest of the export's transaction, sorting is the planner's last resort:
-- each batch is then read by continuing the index in its order from the last
-- key, never by fetching every later row of the account to sort it and keep the
-- first @lim (the plan it takes on statistics left stale by a bulk import, which
-- reads a million-row export two hundred times over: TestExportReadsEachRowOnce).
-- JIT off as well: a sort that cannot be avoided (the events' merge of rows and
-- batches) then costs 1e10 more by the planner's reckoning, past jit_above_cost,
-- and each batch of an events export compiled its plan with inlining and
-- optimization (230 ms of a 250 ms statement: TestExportEventsIsNotCompiled).
SELECT set_config('enable_sort', 'off', true), set_config('jit', 'off', true);
