-- Erasure of one person (internal/erasure). Every statement is bounded: a window of
-- ids on a primary key, or a list of ids the caller collected, so no transaction
-- grows with the person's history or the account's size (every account's event
-- readers wait below the oldest running transaction). Each is idempotent: a
-- second run of an erasure finds nothing left to change.
--
-- pattern is a case-insensitive regular expression matching the address in every
-- form it is stored in (as typed, lower case, URL-encoded); the caller builds it
-- from the address with every metacharacter escaped.

-- name: ErasureGet :one
SELECT * FROM erasures WHERE account_id = @account_id AND subscriber_id = @subscriber_id;

-- name: ErasureStart :one
-- One row per subscriber erased: a repeated request resumes it.
INSERT INTO erasures (account_id, subscriber_id, requested_by)
VALUES (@account_id, sqlc.narg('subscriber_id')::bigint, @requested_by)
ON CONFLICT (account_id, subscriber_id) WHERE subscriber_id IS NOT NULL
DO UPDATE SET status = 'running'
RETURNING *;

-- name: ErasureComplete :one
UPDATE erasures SET status = 'completed', counts = @counts, completed_at = now()
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: ErasureSuppressHash :exec
-- The keyed hash of the address replaces the address in the suppression list
-- (ErasureSuppressionDelete), so the opt-out outlives the erasure.
INSERT INTO suppressions (account_id, email_lower, reason, source)
VALUES (@account_id, @hash, 'erasure', 'erasure')
ON CONFLICT (account_id, email_lower) DO NOTHING;

-- name: ErasureSuppressionDelete :execrows
DELETE FROM suppressions WHERE account_id = @account_id AND email_lower = @email_lower;

-- name: ErasureSubscriberStop :exec
-- Nothing new is built for the person while the erasure runs.
UPDATE subscribers SET status = 'unsubscribed', updated_at = now()
WHERE account_id = @account_id AND id = @id AND status <> 'unsubscribed';

-- name: ErasureMaxIDs :one
-- The upper bounds of the windowed scans.
-- (Events are scanned in windows of rows instead: ErasureEventsWindowEnd.)
SELECT coalesce((SELECT max(id) FROM sends), 0)::bigint AS sends,
       coalesce((SELECT max(id) FROM messages), 0)::bigint AS messages,
       coalesce((SELECT max(id) FROM tracking_hits), 0)::bigint AS hits;

-- name: ErasureSendsFind :many
-- The person's send rows in a window of ids: campaign and sequence rows of the
-- subscriber, and every row to the address (a message's, or an earlier
-- subscriber's of the same address). A message row's subscriber slot holds the
-- message id, hence the job_id test.
SELECT s.id, s.job_id, s.status FROM sends s
WHERE s.id > @after_id AND s.id <= @upto_id AND s.account_id = @account_id
  AND (s.email_lower = @email_lower
       OR (s.subscriber_id = sqlc.narg('subscriber_id')::bigint AND s.job_id NOT LIKE 'message:%'));

-- name: ErasureSendsSuppressQueued :one
-- The person's queued rows are settled as suppressed before anything is erased,
-- so none is claimed with its address gone.
-- They are added to their campaigns' kept status counts in the statement.
WITH settled AS (
    UPDATE sends s SET status = 'suppressed', updated_at = now()
    WHERE s.account_id = @account_id AND s.id = ANY(@ids::bigint[]) AND s.status = 'queued'
    RETURNING s.campaign_id, s.account_id
), status_counted AS (
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT x.campaign_id, x.account_id, 'suppressed', count(*) FROM settled x
    GROUP BY 1, 2 ORDER BY 1
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
SELECT count(*) FROM settled;

-- name: ErasureSendsInFlight :one
SELECT count(*) FROM sends WHERE account_id = @account_id AND id = ANY(@ids::bigint[]) AND status = 'sending';

-- name: ErasureSendsScrub :execrows
-- The rows stay (a campaign's counts and its exactly-once history need them),
-- without the address; a provider's error text may quote it, and a provider's
-- message id may be built from the job id, which holds a message's client key.
UPDATE sends SET email = '', email_lower = '',
    last_error = regexp_replace(last_error, @pattern::text, '', 'gi'),
    provider_message_id = regexp_replace(provider_message_id, @pattern::text, '', 'gi'),
    job_id = CASE WHEN job_id LIKE 'message:%' THEN 'message:' || account_id || ':erased:' || subscriber_id ELSE job_id END
WHERE account_id = @account_id AND id = ANY(@ids::bigint[]) AND status NOT IN ('queued', 'sending');

-- name: ErasureMessagesFind :many
-- The messages to the address (as To, Cc or Bcc) in a window of ids.
SELECT m.id, (lower(m.to_email) = @email_lower::text)::bool AS to_person, m.cc, m.bcc FROM messages m
WHERE m.id > @after_id::bigint AND m.id <= @upto_id::bigint AND m.account_id = @account_id::bigint
  AND (lower(m.to_email) = @email_lower::text OR @email_lower::text = ANY(lower((m.cc || m.bcc)::text)::text[]));

-- name: ErasureMessagesScrub :execrows
-- A message to the person keeps its row (the account's counts, its send's
-- history) and loses everything else: address, name, content, data, headers and
-- the client's key, which may have been built from the address. Its links and
-- attachments go with ErasureMessageParts.
UPDATE messages SET to_email = '', to_name = '', subject = '', html = '', text = '', data = '{}',
    headers = '[]', tags = '{}', cc = '{}', bcc = '{}',
    idempotency_key = 'erased:' || id, request_hash = sha256(convert_to('erased:' || id, 'UTF8'))
WHERE account_id = @account_id AND id = ANY(@ids::bigint[]) AND to_email <> '';

-- name: ErasureMessageDropCopy :execrows
-- A message to someone else that copied the person loses the person's address
-- only (the caller filtered the lists).
UPDATE messages SET cc = @cc::text[], bcc = @bcc::text[]
WHERE account_id = @account_id AND id = @id;

-- name: ErasureMessageLinksDelete :execrows
DELETE FROM message_links WHERE account_id = @account_id AND message_id = ANY(@ids::bigint[]);

-- name: ErasureMessageAttachmentsDelete :many
DELETE FROM message_attachments WHERE account_id = @account_id AND message_id = ANY(@ids::bigint[])
RETURNING sha256;

-- name: ErasureBlobsDeleteUnused :execrows
-- Attachment content referenced by nothing any more (only the erased messages held it).
DELETE FROM attachment_blobs b
WHERE b.account_id = @account_id AND b.sha256 = ANY(@shas::bytea[])
  AND NOT EXISTS (SELECT 1 FROM message_attachments x WHERE x.account_id = b.account_id AND x.sha256 = b.sha256)
  AND NOT EXISTS (SELECT 1 FROM campaign_attachments x WHERE x.account_id = b.account_id AND x.sha256 = b.sha256)
  AND NOT EXISTS (SELECT 1 FROM template_attachments x WHERE x.account_id = b.account_id AND x.sha256 = b.sha256);

-- name: ErasureEventsWindowEnd :one
-- The end of the next window of events' scan: the id @n rows of events past
-- @after_id (or the last), 0 when none is left. Event ids step by 1024
-- (00840_event_batches.sql), so a window of ids would hold few rows.
SELECT coalesce(max(w.id), 0)::bigint AS upto FROM (
    SELECT e.id FROM events e WHERE e.id > @after_id ORDER BY e.id LIMIT @n) w;

-- name: ErasureEventBatchesWindowEnd :one
-- As ErasureEventsWindowEnd, for event_batches (@n batches).
SELECT coalesce(max(w.first_id), 0)::bigint AS upto FROM (
    SELECT b.first_id FROM event_batches b WHERE b.first_id > @after_id ORDER BY b.first_id LIMIT @n) w;

-- name: ErasureEventBatchesScrub :one
-- ErasureEventsScrub for the elements of the event batches (first_id in the
-- window) of the account: those of the person lose the address; the count is of
-- elements (events) scrubbed. A batch holds send.* outcomes only, which carry no
-- name or attributes.
WITH el AS MATERIALIZED (
    SELECT b.first_id, u.k, u.data,
           (u.data::text ~* @pattern::text
            OR u.data ->> 'send_id' = ANY(@send_ids::text[])
            OR u.data ->> 'message_id' = ANY(@message_ids::text[])) AS person
    FROM event_batches b CROSS JOIN LATERAL unnest(b.data) WITH ORDINALITY AS u (data, k)
    WHERE b.first_id > @after_id::bigint AND b.first_id <= @upto_id::bigint AND b.account_id = @account_id::bigint
), hit AS (
    SELECT DISTINCT el.first_id FROM el WHERE el.person
), scrubbed AS (
    UPDATE event_batches b
    SET data = (SELECT array_agg(CASE WHEN el.person THEN regexp_replace(el.data::text, @pattern::text, '', 'gi')::jsonb
                                      ELSE el.data END ORDER BY el.k)
                FROM el WHERE el.first_id = b.first_id)
    WHERE b.first_id IN (SELECT hit.first_id FROM hit) AND b.account_id = @account_id::bigint
)
SELECT count(*) FILTER (WHERE el.person) AS n FROM el;

-- name: ErasureEventsScrub :execrows
-- The person's events in a window of ids keep their type, time and ids, and lose
-- the address (wherever in the data it is quoted), the name and attributes. Found
-- by the address in the text, the person's send rows, messages, or the subscriber
-- (send.* events of a message carry the message id as subscriber_id, so the
-- subscriber id is matched on subscriber.* and sequence.* events only).
UPDATE events e
SET data = CASE WHEN e.type LIKE 'campaign.%' THEN d.scrubbed ELSE d.scrubbed - 'name' - 'attributes' - 'to_name' END
FROM (
    SELECT x.id, regexp_replace(x.data::text, @pattern::text, '', 'gi')::jsonb AS scrubbed FROM events x
    WHERE x.id > @after_id::bigint AND x.id <= @upto_id::bigint AND x.account_id = @account_id::bigint
      AND (x.data::text ~* @pattern::text
           OR x.data ->> 'send_id' = ANY(@send_ids::text[])
           OR x.data ->> 'message_id' = ANY(@message_ids::text[])
           OR ((x.type LIKE 'subscriber.%' OR x.type LIKE 'sequence.%')
               AND x.data ->> 'subscriber_id' = sqlc.narg('subscriber_id')::text))
) d
WHERE e.id = d.id;

-- name: ErasureHitsScrub :execrows
-- Clicks and opens stay counted (the campaign's report); the browser's user agent,
-- which identifies a device, goes.
UPDATE tracking_hits SET user_agent = ''
WHERE id > @after_id AND id <= @upto_id AND account_id = @account_id AND user_agent <> ''
  AND (send_id = ANY(@send_ids::bigint[]) OR message_id = ANY(@message_ids::bigint[]));

-- name: ErasureEnrollmentsScrub :execrows
UPDATE sequence_enrollments e SET email = '', data = '{}'
WHERE e.account_id = @account_id::bigint
  AND e.sequence_id IN (SELECT q.id FROM sequences q WHERE q.account_id = @account_id::bigint)
  AND (e.subscriber_id = sqlc.narg('subscriber_id')::bigint OR lower(e.email) = @email_lower::text)
  AND (e.email <> '' OR e.data <> '{}');

-- name: ErasureSequenceDataDelete :execrows
DELETE FROM sequence_send_data WHERE account_id = @account_id AND job_id = ANY(@job_ids::text[]);

-- name: ErasureTrackEventsDelete :execrows
DELETE FROM track_events
WHERE account_id = @account_id AND (email_lower = @email_lower OR subscriber_id = sqlc.narg('subscriber_id')::bigint);

-- name: ErasureWebhookEventsScrub :execrows
-- A provider's event keeps its id (a replay must still change nothing) and loses
-- the address and the payload.
UPDATE webhook_events SET email_lower = NULL, payload = NULL
WHERE account_id = @account_id
  AND (email_lower = @email_lower OR payload::text ~* @pattern::text);

-- name: ErasureIdempotencyDelete :execrows
-- Stored responses quoting the address (a created subscriber, a message): a replay
-- of the key after the erasure runs the request again, and meets the suppression.
DELETE FROM idempotency_keys
WHERE account_id = @account_id
  AND (key ~* @pattern::text OR convert_from(coalesce(response_body, ''), 'UTF8') ~* @pattern::text);

-- name: ErasureSoftBouncesDelete :execrows
DELETE FROM soft_bounces WHERE account_id = @account_id AND email_lower = @email_lower;

-- name: ErasureSubscriberDelete :execrows
-- Last: the subscriber row is what a repeated request resumes from. Its
-- memberships (and their opt-in sources) go with it.
DELETE FROM subscribers WHERE account_id = @account_id AND id = @id;

-- name: ErasureSubscriberByEmail :one
SELECT id FROM subscribers WHERE account_id = @account_id AND email_lower = @email_lower;

-- name: ErasureAuditTargetsScrub :execrows
-- The audit log names a suppression by its address (DELETE /v1/suppressions/{email},
-- as the caller spelled it): the entry stays, without the address. The person's
-- other entries name ids, never addresses.
UPDATE audit_log SET target_id = NULL
WHERE account_id = @account_id AND target_type = 'suppression' AND target_id ~* @pattern::text;
