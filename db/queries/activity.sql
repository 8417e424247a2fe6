-- One person's activity, newest first (GET /v1/subscribers/{id}/activity and the
-- data export): every branch reaches the person through an index — the
-- campaigns' (campaign_id, subscriber_id) key, messages_to_idx, tracking_hits'
-- send and message indexes, events_person_idx, the enrollments' (sequence_id,
-- subscriber_id) key, the suppressions' key — so it costs the person's history,
-- not the account's. The page key is (at, kind, ref_id), compared as a row.

-- name: ActivityList :many
WITH person_sends AS (
    SELECT s.id, s.campaign_id, s.status, s.feedback, s.attempts, s.last_error, s.sent_at, s.updated_at,
           c.name AS campaign_name, c.kind AS campaign_kind
    FROM campaigns c
    JOIN sends s ON s.campaign_id = c.id AND s.subscriber_id = @subscriber_id::bigint
    WHERE c.account_id = @account_id::bigint AND c.kind <> 'messages'
), person_messages AS (
    SELECT m.id, m.subject, m.category, m.created_at, s.id AS send_id, s.status, s.sent_at, s.feedback
    FROM messages m
    LEFT JOIN sends s ON s.job_id = 'message:' || m.account_id || ':' || m.idempotency_key AND s.job_id NOT LIKE 'campaign:%'
    WHERE m.account_id = @account_id::bigint AND lower(m.to_email) = @email_lower::text
), items AS (
    SELECT coalesce(ps.sent_at, ps.updated_at) AS at, 'send'::text AS kind, ps.id AS ref_id,
           jsonb_build_object('campaign_id', ps.campaign_id, 'campaign_name', ps.campaign_name,
                              'campaign_kind', ps.campaign_kind, 'status', ps.status, 'feedback', ps.feedback,
                              'attempts', ps.attempts, 'error', ps.last_error) AS data
    FROM person_sends ps
    UNION ALL
    SELECT coalesce(pm.sent_at, pm.created_at), 'message', pm.id,
           jsonb_build_object('message_id', pm.id, 'subject', pm.subject, 'category', pm.category,
                              'status', pm.status, 'feedback', pm.feedback)
    FROM person_messages pm
    UNION ALL
    SELECT h.occurred_at, h.kind, h.id,
           jsonb_build_object('campaign_id', h.campaign_id, 'message_id', h.message_id, 'suspected_bot', h.suspected_bot,
                              'link_index', CASE WHEN h.kind = 'click' THEN h.link_idx END,
                              'url', coalesce(tl.url, ml.url))
    FROM tracking_hits h
    LEFT JOIN tracked_links tl ON h.kind = 'click' AND h.message_id IS NULL AND tl.campaign_id = h.campaign_id AND tl.idx = h.link_idx
    LEFT JOIN message_links ml ON h.kind = 'click' AND ml.message_id = h.message_id AND ml.idx = h.link_idx
    WHERE h.account_id = @account_id::bigint
      AND (h.send_id IN (SELECT ps.id FROM person_sends ps) OR h.message_id IN (SELECT pm.id FROM person_messages pm))
    UNION ALL
    SELECT e.occurred_at, e.type, e.id, e.data - 'email'
    FROM events e
    WHERE e.account_id = @account_id::bigint AND lower(e.data ->> 'email') = @email_lower::text
      AND (e.type LIKE 'subscriber.%' OR e.type LIKE 'suppression.%')
    UNION ALL
    SELECT l.at, 'sequence_step', l.id,
           jsonb_build_object('sequence_id', l.sequence_id, 'sequence_name', q.name, 'step', l.step,
                              'outcome', l.outcome, 'reason', l.reason, 'run', l.run)
    FROM sequences q
    JOIN sequence_enrollments en ON en.sequence_id = q.id AND en.subscriber_id = @subscriber_id::bigint
    JOIN sequence_step_log l ON l.enrollment_id = en.id
    WHERE q.account_id = @account_id::bigint
    UNION ALL
    SELECT x.created_at, 'suppression', 0::bigint, jsonb_build_object('reason', x.reason, 'source', x.source)
    FROM suppressions x
    WHERE x.account_id = @account_id::bigint AND x.email_lower = @email_lower::text
)
SELECT i.at::timestamptz AS at, i.kind::text AS kind, i.ref_id::bigint AS ref_id, i.data::jsonb AS data
FROM items i
WHERE (sqlc.narg('before_at')::timestamptz IS NULL
       OR (i.at, i.kind, i.ref_id) < (sqlc.narg('before_at')::timestamptz, @before_kind::text, @before_id::bigint))
ORDER BY i.at DESC, i.kind DESC, i.ref_id DESC
LIMIT @lim;

-- name: ActivityConsents :many
-- The evidence of the person's consent: each list membership with how and when it
-- last changed (the source names the form, the confirmation link, the preference
-- page or the API), and the subscriber's sign-up facts.
SELECT m.list_id, l.name AS list_name, m.status, m.status_source, m.status_at, m.created_at
FROM list_members m
JOIN lists l ON l.id = m.list_id
WHERE m.account_id = @account_id AND m.subscriber_id = @subscriber_id
ORDER BY m.list_id;

-- name: ActivitySubscriber :one
SELECT id, email, email_lower, name, attributes, status, signup, optin_sent_at, created_at, updated_at
FROM subscribers WHERE account_id = @account_id AND id = @id;

-- name: ActivityExportSender :many
-- The From of the mail that carried a preference link (a campaign's, or a
-- message's), which the person's data export is mailed from.
SELECT c.from_email, c.from_name FROM campaigns c
WHERE c.account_id = @account_id AND c.id = @campaign_id AND c.kind <> 'messages' AND c.from_email <> ''
UNION ALL
SELECT m.from_email, m.from_name FROM messages m
WHERE m.account_id = @account_id AND m.id = @message_id AND m.from_email <> '';
