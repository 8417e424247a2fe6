-- Transactional messages: one send row each, in the account's message stream (a
-- campaigns row of kind 'messages', always 'sending'). Accepting a message is one
-- transaction: the stream, the message, its send row and the executors' wake-up.

-- name: MessageStreamEnsure :one
-- The account's live stream for a sender or a sender pool (both NULL: the default
-- stream, which sends through the account's default sender), created with the
-- first message that names it. A concurrent first message may make both inserts skip before either
-- commits; the caller then asks again. The existing stream is locked FOR SHARE
-- until the message commits: a sender's deletion retires an idle stream only
-- after locking it (SenderStreamLock), so it never retires one a message is
-- being added to.
WITH ins AS (
    INSERT INTO campaigns (account_id, name, subject, from_email, status, kind, approved_at, started_at, sender_id, pool_id)
    VALUES (@account_id, 'transactional messages', '', '', 'sending', 'messages', now(), now(),
            sqlc.narg('sender_id')::bigint, sqlc.narg('pool_id')::bigint)
    ON CONFLICT (account_id, coalesce(sender_id, 0), coalesce(pool_id, 0)) WHERE kind = 'messages' AND status = 'sending'
    DO NOTHING
    RETURNING id
), existing AS (
    SELECT id FROM campaigns
    WHERE account_id = @account_id AND kind = 'messages' AND status = 'sending'
      AND sender_id IS NOT DISTINCT FROM sqlc.narg('sender_id')::bigint
      AND pool_id IS NOT DISTINCT FROM sqlc.narg('pool_id')::bigint
    FOR SHARE
)
SELECT id FROM ins
UNION ALL
SELECT id FROM existing
LIMIT 1;

-- name: MessageInsert :one
-- ON CONFLICT on the key: a concurrent request with the same key waits for this one
-- to commit and then inserts nothing, so it reads the stored message instead.
INSERT INTO messages (account_id, idempotency_key, request_hash, category, to_email, to_name, from_email,
                      from_name, reply_to, subject, html, text, data, template_id, headers, tags, send_at, sender_id,
                      cc, bcc, reply_to_more, attachment_count, track_clicks, track_opens, pool_id)
VALUES (@account_id, @idempotency_key, @request_hash, @category, @to_email, @to_name, @from_email,
        @from_name, @reply_to, @subject, @html, @text, @data, sqlc.narg('template_id'), @headers, @tags::text[],
        sqlc.narg('send_at'), sqlc.narg('sender_id'), coalesce(@cc::text[], '{}'), coalesce(@bcc::text[], '{}'),
        coalesce(@reply_to_more::text[], '{}'),
        @attachment_count, @track_clicks, @track_opens, sqlc.narg('pool_id'))
ON CONFLICT (account_id, idempotency_key) DO NOTHING
RETURNING id;

-- name: MessageSendInsert :exec
-- The message's send row: due at send_at (or at once), keyed by job_id.
INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, next_attempt_at)
VALUES (@stream_id, @account_id, @message_id, @email::text, lower(@email::text), @job_id,
        coalesce(sqlc.narg('send_at')::timestamptz, '-infinity'));

-- name: MessageByKey :one
SELECT id, request_hash FROM messages WHERE account_id = @account_id AND idempotency_key = @idempotency_key;

-- name: MessageGet :one
-- (job_id NOT LIKE 'campaign:%', true of every message's job id, lets the planner use
-- sends_job_id_key, which holds only such job ids: migration 00160.)
SELECT m.id, m.idempotency_key, m.category, m.to_email, m.to_name, m.from_email, m.from_name, m.reply_to,
       m.template_id, m.tags, m.send_at, m.created_at, m.sender_id, m.cc, m.bcc, m.reply_to_more, m.attachment_count,
       m.track_clicks, m.track_opens, s.status, s.attempts, s.provider_message_id, s.last_error, s.sent_at, s.updated_at, s.feedback,
       m.subject, m.pool_id
FROM messages m
JOIN sends s ON s.job_id = 'message:' || m.account_id || ':' || m.idempotency_key AND s.job_id NOT LIKE 'campaign:%'
WHERE m.account_id = @account_id AND m.id = @id;

-- name: MessageList :many
SELECT m.id, m.idempotency_key, m.category, m.to_email, m.to_name, m.from_email, m.from_name, m.reply_to,
       m.template_id, m.tags, m.send_at, m.created_at, m.sender_id, m.cc, m.bcc, m.reply_to_more, m.attachment_count,
       m.track_clicks, m.track_opens, s.status, s.attempts, s.provider_message_id, s.last_error, s.sent_at, s.updated_at, s.feedback,
       m.subject, m.pool_id
FROM messages m
CROSS JOIN LATERAL (
    SELECT status, attempts, provider_message_id, last_error, sent_at, updated_at, feedback FROM sends
    WHERE job_id = 'message:' || m.account_id || ':' || m.idempotency_key AND job_id NOT LIKE 'campaign:%'
    LIMIT 1) AS s
WHERE m.account_id = @account_id AND m.id > @after_id
  AND (sqlc.narg('status')::text IS NULL OR s.status = sqlc.narg('status')::text)
  AND (sqlc.narg('to_email')::text IS NULL OR lower(m.to_email) = lower(sqlc.narg('to_email')::text))
  AND (sqlc.narg('tag')::text IS NULL OR m.tags @> ARRAY[sqlc.narg('tag')::text])
ORDER BY m.id
LIMIT @lim;

-- name: MessageListNewest :many
-- MessageList newest first: a keyset page in descending id order before @before_id
-- (0: from the newest), so the message accepted last is on the first page.
-- (Both lists find each message's send through a LATERAL lookup with LIMIT 1, which
-- the planner cannot flatten into a join: joined, it guessed a few hundred message
-- sends among millions of campaign sends and hashed every message of the account
-- before sorting, 0.9 s p95 with 50,000 messages; walked, a page reads its messages
-- down messages_account_id_idx and one send each through sends_job_id_key.)
SELECT m.id, m.idempotency_key, m.category, m.to_email, m.to_name, m.from_email, m.from_name, m.reply_to,
       m.template_id, m.tags, m.send_at, m.created_at, m.sender_id, m.cc, m.bcc, m.reply_to_more, m.attachment_count,
       m.track_clicks, m.track_opens, s.status, s.attempts, s.provider_message_id, s.last_error, s.sent_at, s.updated_at, s.feedback,
       m.subject, m.pool_id
FROM messages m
CROSS JOIN LATERAL (
    SELECT status, attempts, provider_message_id, last_error, sent_at, updated_at, feedback FROM sends
    WHERE job_id = 'message:' || m.account_id || ':' || m.idempotency_key AND job_id NOT LIKE 'campaign:%'
    LIMIT 1) AS s
WHERE m.account_id = @account_id AND (@before_id::bigint = 0 OR m.id < @before_id::bigint)
  AND (sqlc.narg('status')::text IS NULL OR s.status = sqlc.narg('status')::text)
  AND (sqlc.narg('to_email')::text IS NULL OR lower(m.to_email) = lower(sqlc.narg('to_email')::text))
  AND (sqlc.narg('tag')::text IS NULL OR m.tags @> ARRAY[sqlc.narg('tag')::text])
ORDER BY m.id DESC
LIMIT @lim;

-- name: MessageClaimBatch :many
-- The executor's claim for a message stream: the same shape as SendClaimBatch (one
-- statement, SKIP LOCKED, oldest due first on sends_claim_idx, the lease and the
-- executor stamped on the row, the route recorded), returning each message's
-- content. Suppression follows the message's category: marketing is blocked by
-- every suppression; transactional (a receipt, a password reset) is not blocked by
-- an unsubscribe, only by a hard bounce, a complaint or a manual suppression.
-- Blocked rows are marked suppressed, as in SendClaimBatch, and their
-- send.suppressed events are written by the same statement (the same event as a
-- campaign's, campaign_id being the stream; the row keeps the message id in
-- subscriber_id, which the event names message_id). A row in
-- doubt whose route changed (the account's default sender changed or was deleted
-- since an interrupted send) becomes unknown unless retry_ambiguous, as in
-- SendClaimBatch. The stream is always sending, so there is no campaign guard.
-- due_at (when the message was accepted, or its send_at) dates how long a message
-- has waited for its sender (Config.MessageHoldMax).
WITH picked AS (
    SELECT s.id,
           (s.in_doubt AND NOT @retry_ambiguous::bool
            AND (s.via_sender_id IS DISTINCT FROM sqlc.narg('via_sender_id')::bigint
                 OR s.via_provider IS DISTINCT FROM @via_provider::text)) AS rerouted
    FROM sends s
    WHERE s.campaign_id = @campaign_id
      AND s.status = 'queued'
      AND s.next_attempt_at <= coalesce(sqlc.narg('now')::timestamptz, now())
      -- One probe per claim (an InitPlan): a suspended or deleted account's
      -- messages stay queued until it is resumed.
      AND EXISTS (SELECT 1 FROM campaigns c CROSS JOIN LATERAL (
                      SELECT 1 FROM accounts a
                      WHERE a.id = c.account_id AND a.suspended_at IS NULL AND a.deleted_at IS NULL
                      LIMIT 1) a
                  WHERE c.id = @campaign_id)
    ORDER BY s.next_attempt_at, s.id
    LIMIT @n
    FOR UPDATE OF s SKIP LOCKED
), judged AS (
    SELECT p.id, p.rerouted, m.to_name, m.from_email, m.from_name, m.reply_to, m.subject, m.html, m.text, m.data,
           m.headers, m.category, m.cc, m.bcc, m.reply_to_more, m.attachment_count, m.track_clicks, m.track_opens,
           greatest(m.created_at, coalesce(m.send_at, m.created_at))::timestamptz AS due_at,
           x.suppressed IS NOT NULL AS blocked
    FROM picked p
    -- Each picked row's sends row, message and verdict by a LATERAL lookup (one
    -- index probe each), and the UPDATE's rows by the picked ids: the executor runs
    -- this on SendPlanLinear's setting (no sequential scan, no nested loop but
    -- these), so no join reads sends, messages or the picked rows whole, whatever the
    -- statistics or the table's size when the plan was cached.
    CROSS JOIN LATERAL (
        SELECT s.account_id, s.email_lower, s.subscriber_id FROM sends s WHERE s.id = p.id LIMIT 1) s
    CROSS JOIN LATERAL (
        SELECT m.* FROM messages m WHERE m.account_id = s.account_id AND m.id = s.subscriber_id LIMIT 1) m
    -- The verdict a LATERAL lookup too: judged is not materialized (it would copy
    -- the bodies), so an EXISTS here would run again for every CASE of the UPDATE
    -- that reads blocked.
    LEFT JOIN LATERAL (
        SELECT true AS suppressed FROM suppressions x
        WHERE x.account_id = s.account_id AND x.email_lower = s.email_lower
          AND (m.category = 'marketing' OR x.reason IN ('hard_bounce', 'complaint', 'manual'))
        LIMIT 1) x ON true
), claimed AS (
    UPDATE sends s
    SET status      = CASE WHEN j.blocked THEN 'suppressed' WHEN j.rerouted THEN 'unknown' ELSE 'sending' END,
        lease_until = CASE WHEN j.blocked OR j.rerouted THEN NULL
                           ELSE coalesce(sqlc.narg('now')::timestamptz, now()) + @lease::interval END,
        attempts    = CASE WHEN j.blocked OR j.rerouted THEN s.attempts ELSE s.attempts + 1 END,
        executor_id = CASE WHEN j.blocked OR j.rerouted THEN s.executor_id ELSE sqlc.narg('executor_id')::bigint END,
        via_sender_id  = CASE WHEN j.blocked OR j.rerouted THEN s.via_sender_id ELSE sqlc.narg('via_sender_id')::bigint END,
        via_provider   = CASE WHEN j.blocked OR j.rerouted THEN s.via_provider ELSE @via_provider::text END,
        via_idempotent = CASE WHEN j.blocked OR j.rerouted THEN s.via_idempotent ELSE @via_idempotent::bool END,
        last_error  = CASE WHEN j.rerouted AND NOT j.blocked
                           THEN 'not replayed: an earlier send may have been delivered through ' ||
                                coalesce('sender ' || s.via_sender_id, 'the default provider') ||
                                ', which no longer sends these messages' ELSE s.last_error END,
        updated_at  = coalesce(sqlc.narg('now')::timestamptz, now())
    FROM judged j
    WHERE s.id = j.id AND s.id = ANY(ARRAY(SELECT p.id FROM picked p))
    RETURNING s.id, s.account_id, s.campaign_id, s.subscriber_id, s.email, s.job_id, s.status, s.attempts,
              s.lease_until, s.executor_id, j.to_name, j.from_email, j.from_name, j.reply_to, j.subject, j.html,
              j.text, j.data, j.headers, j.category, j.due_at, s.last_error, j.cc, j.bcc, j.reply_to_more,
              j.attachment_count, j.track_clicks, j.track_opens
), settled_events AS (
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT c.account_id, 'send.' || c.status, coalesce(sqlc.narg('now')::timestamptz, now()),
           jsonb_build_object('campaign_id', c.campaign_id, 'send_id', c.id, 'message_id', c.subscriber_id,
                              'email', c.email, 'status', c.status)
           || CASE WHEN c.status = 'unknown' THEN jsonb_build_object('attempts', c.attempts, 'error', c.last_error)
                   ELSE '{}'::jsonb END
    FROM claimed c
    WHERE c.status IN ('suppressed', 'unknown')
), settled_counted AS (
    -- The same rows in the stream's kept status counts (campaign_status_counts).
    -- One claim is of one stream: a plain aggregate, no grouping (the plan test
    -- holds the claim free of any sort).
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT @campaign_id, x.account_id, v.status, v.n
    FROM (SELECT min(c.account_id) AS account_id,
                 count(*) FILTER (WHERE c.status = 'suppressed') AS suppressed,
                 count(*) FILTER (WHERE c.status = 'unknown') AS unknown
          FROM claimed c) x
    CROSS JOIN LATERAL (VALUES ('suppressed', x.suppressed), ('unknown', x.unknown)) v (status, n)
    WHERE v.n > 0
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
SELECT c.id, c.account_id, c.campaign_id, c.subscriber_id, c.email, c.job_id, c.status, c.attempts,
       c.lease_until, c.executor_id, c.to_name, c.from_email, c.from_name, c.reply_to, c.subject, c.html,
       c.text, c.data, c.headers, c.category, c.due_at, c.cc, c.bcc, c.reply_to_more, c.attachment_count,
       c.track_clicks, c.track_opens
FROM claimed c;

-- name: MessageStreamsDue :many
-- The executors' sweep over every message stream, in one statement: each stream
-- with a queued row and the earliest next_attempt_at among them (one probe of
-- sends_claim_idx per stream). An idle stream is otherwise never claimed: this
-- finds rows no NOTIFY announced (rescued, released, a lost notification) and the
-- next send_at or retry time. Not a tenant query: it reads every account's stream.
-- A message due at once is queued at -infinity, read as the epoch. The answer is
-- how long until then on the database's clock, which the claim compares
-- next_attempt_at with: the executor's own clock may be off from it.
SELECT c.id,
       (extract(epoch FROM greatest(q.next_attempt_at, 'epoch') - coalesce(sqlc.narg('now')::timestamptz, now())) * 1e6)::bigint AS due_in_us
FROM campaigns c
CROSS JOIN LATERAL (
    SELECT s.next_attempt_at FROM sends s
    WHERE s.campaign_id = c.id AND s.status = 'queued'
    ORDER BY s.next_attempt_at, s.id
    LIMIT 1
) q
WHERE c.kind = 'messages' AND c.status = 'sending'
  -- A suspended (or deleted) account's streams are not due: no sweep wakes for them.
  AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = c.account_id AND a.suspended_at IS NULL AND a.deleted_at IS NULL);

-- name: MessageFailHeld :many
-- Messages wait while the sender they go through is paused (its stream is not
-- claimed, CampaignListSending's sender_paused), but not for ever: a message due
-- longer ago than hold_max is failed with the sender's pause reason, with its
-- send.failed event. Only the streams of paused senders are looked at, and in them
-- the queued rows (sends_claim_idx). A pool's stream is not a paused sender's: the
-- pool passes over a paused member, and its messages wait while every member is
-- held, as a pool's campaign does. Not a tenant query: the executors'
-- maintenance runs it for every account.
WITH held AS (
    SELECT s.id, sn.paused_reason
    FROM campaigns c
    JOIN senders sn ON sn.account_id = c.account_id
                   AND (sn.id = c.sender_id OR (c.sender_id IS NULL AND c.pool_id IS NULL AND sn.is_default))
    JOIN sends s ON s.campaign_id = c.id AND s.status = 'queued'
    JOIN messages m ON m.account_id = s.account_id AND m.id = s.subscriber_id
    WHERE c.kind = 'messages' AND c.status = 'sending' AND sn.paused_reason IS NOT NULL
      AND greatest(m.created_at, coalesce(m.send_at, m.created_at))
          < coalesce(sqlc.narg('now')::timestamptz, now()) - @hold_max::interval
    LIMIT 1000
    FOR UPDATE OF s SKIP LOCKED
), failed AS (
    UPDATE sends s
    SET status = 'failed', lease_until = NULL,
        last_error = 'held longer than ' || @hold_max::interval || ' while its sender is paused: ' || h.paused_reason,
        updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
    FROM held h
    WHERE s.id = h.id AND s.status = 'queued'
    RETURNING s.id, s.account_id, s.campaign_id, s.subscriber_id, s.email, s.status, s.attempts, s.last_error
), failed_events AS (
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT f.account_id, 'send.failed', coalesce(sqlc.narg('now')::timestamptz, now()),
           jsonb_build_object('campaign_id', f.campaign_id, 'send_id', f.id, 'message_id', f.subscriber_id,
                              'email', f.email, 'status', f.status, 'attempts', f.attempts, 'error', left(f.last_error, 500))
    FROM failed f
), status_counted AS (
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT f.campaign_id, f.account_id, 'failed', count(*) FROM failed f
    GROUP BY 1, 2 ORDER BY 1
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
SELECT f.id FROM failed f;

-- name: MessageDeleteRetired :execrows
-- Message retention: deletes up to n messages accepted before cutoff whose send has
-- settled (sent, failed, suppressed, cancelled, unknown), with their send rows, in
-- one statement, oldest first (messages_created_at_idx). A message still queued or
-- in flight stays until it settles. Once deleted, its Idempotency-Key is free again:
-- idempotency holds for as long as the message exists. SKIP LOCKED keeps replicas
-- off each other's batch and off a row an acknowledgement holds. Not a tenant query:
-- the executors' maintenance runs it for every account.
WITH doomed AS (
    SELECT m.account_id, m.id, s.id AS send_id
    FROM messages m
    JOIN sends s ON s.job_id = 'message:' || m.account_id || ':' || m.idempotency_key AND s.job_id NOT LIKE 'campaign:%'
    WHERE m.created_at < @cutoff::timestamptz
      AND s.status IN ('sent', 'failed', 'suppressed', 'cancelled', 'unknown')
    ORDER BY m.created_at, m.id
    LIMIT @n
    FOR UPDATE OF m, s SKIP LOCKED
), gone_sends AS (
    DELETE FROM sends s USING doomed d WHERE s.id = d.send_id
)
DELETE FROM messages m USING doomed d WHERE m.account_id = d.account_id AND m.id = d.id;
