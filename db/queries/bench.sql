-- Queries of `sendonce bench` only.

-- name: BenchSentAt :many
-- When the sampled rows were acknowledged: the ack statement's now(), which the bench
-- compares with the moment the fake provider accepted each message.
SELECT job_id, sent_at FROM sends
WHERE campaign_id = @campaign_id AND job_id = ANY(@job_ids::text[]) AND sent_at IS NOT NULL;

-- name: BenchVacuumAnalyze :exec
-- Fresh statistics and a clean visibility map between phases, as autovacuum would
-- give shortly after bulk writes, so each phase starts from the same state.
VACUUM ANALYZE subscribers, sends;

-- name: BenchCampaignStatus :one
-- The campaign's status alone, which the bench polls while it sends: one index
-- read, so the poll adds next to nothing to the CPU the bench measures.
SELECT status FROM campaigns WHERE account_id = @account_id AND id = @id;

-- name: BenchLastSentAt :one
-- When the campaign's last message was acknowledged: the end of the drain, before
-- the finalizer notices the campaign is done.
SELECT max(sent_at)::timestamptz FROM sends WHERE campaign_id = @campaign_id;

-- name: BenchDeleteCampaignSends :exec
-- Empties the account's send rows between points of the executors curve (every
-- campaign of the bench account is done by then), so each point starts from a
-- table of the same size.
DELETE FROM sends WHERE account_id = @account_id;

-- name: BenchSequenceTemplate :one
INSERT INTO templates (account_id, name, subject, text)
VALUES (@account_id, 'bench sequence step', 'Step for {{.Name}}', 'Hello {{.Name}}')
RETURNING id;

-- name: BenchSequenceEnroll :execrows
-- n of the account's subscribers enrolled at once, due now: the backlog a process
-- finds after an outage, or a sequence's first step for a large import.
INSERT INTO sequence_enrollments (account_id, sequence_id, subscriber_id, email, due_at, trigger)
SELECT s.account_id, @sequence_id, s.id, s.email, now(), 'manual'
FROM subscribers s
WHERE s.account_id = @account_id
ORDER BY s.id
LIMIT @n;

-- name: BenchSequenceProgress :one
-- How far the bench sequence is: enrollments done, step sends acknowledged, and
-- when the last one was.
SELECT (SELECT count(*) FROM sequence_enrollments e WHERE e.sequence_id = @sequence_id AND e.state <> 'active')::bigint AS advanced,
       (SELECT count(*) FROM sends s JOIN sequence_steps st ON st.campaign_id = s.campaign_id
        WHERE st.sequence_id = @sequence_id AND s.status = 'sent')::bigint AS sent,
       coalesce((SELECT max(s.sent_at) FROM sends s JOIN sequence_steps st ON st.campaign_id = s.campaign_id
                 WHERE st.sequence_id = @sequence_id), 'epoch')::timestamptz AS last_sent_at;

-- name: BenchWALInsertLSN :one
-- Where the cluster's WAL insertion stands: the bench reads it around the send to
-- report the WAL it wrote per message (the cluster's total, autovacuum included).
SELECT pg_current_wal_insert_lsn()::text;

-- name: BenchWALBytes :one
-- The WAL written between two positions read by BenchWALInsertLSN.
SELECT pg_wal_lsn_diff(sqlc.arg(end_lsn)::text::pg_lsn, sqlc.arg(start_lsn)::text::pg_lsn)::bigint;

-- name: BenchDeleteSendsOfCampaign :exec
-- Empties one bench campaign's send rows (`bench --grow`), so each measured phase
-- starts from the same table: the prefilled settled rows stay.
DELETE FROM sends WHERE campaign_id = @campaign_id;

-- name: BenchRetiredCampaignsInsert :many
-- @n sent campaigns of the bench account that finished @age ago (`bench --grow`):
-- the owners of the prefilled settled send rows, old enough for SENDONCE_SEND_RETENTION.
INSERT INTO campaigns (account_id, name, subject, from_email, text_template, status,
                       approved_at, started_at, finished_at, created_at, updated_at)
SELECT sqlc.arg(account_id)::bigint, 'bench settled ' || g, 'Old news ' || g, 'news@bench.example.com', 'Hello {{.Name}}', 'sent',
       now() - sqlc.arg(age)::interval - interval '1 hour', now() - sqlc.arg(age)::interval - interval '1 hour',
       now() - sqlc.arg(age)::interval, now() - sqlc.arg(age)::interval - interval '2 hours', now() - sqlc.arg(age)::interval
FROM generate_series(1, sqlc.arg(n)::int) AS g
ORDER BY g
RETURNING id;

-- name: BenchSettledSendsInsert :one
-- One batch of a finished campaign's settled send rows (`bench --grow`): the
-- account's subscribers after id @after_subscriber_id, at most @n, nearly all sent,
-- one in fifty failed, as the executor leaves them. One INSERT … SELECT per batch,
-- no round trip per row; it returns the rows and the last subscriber, where the
-- next batch resumes.
WITH ins AS (
    INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, attempts,
                       sent_at, provider_message_id, via_provider, via_idempotent, created_at, updated_at)
    SELECT c.id, c.account_id, s.id, s.email, s.email_lower, 'campaign:' || c.id || ':' || s.id,
           CASE WHEN s.id % 50 = 7 THEN 'failed' ELSE 'sent' END, 1,
           CASE WHEN s.id % 50 = 7 THEN NULL ELSE c.started_at + (s.id % 3600) * interval '1 second' END,
           CASE WHEN s.id % 50 = 7 THEN NULL ELSE 'campaign:' || c.id || ':' || s.id END,
           'default', true, c.started_at, c.finished_at
    FROM campaigns c
    CROSS JOIN LATERAL (
        SELECT id, email, email_lower FROM subscribers
        WHERE account_id = c.account_id AND id > sqlc.arg(after_subscriber_id)::bigint
        ORDER BY id LIMIT sqlc.arg(n)::bigint) AS s
    WHERE c.account_id = sqlc.arg(account_id)::bigint AND c.id = sqlc.arg(campaign_id)::bigint
    RETURNING subscriber_id
)
SELECT count(*)::bigint AS rows, coalesce(max(subscriber_id), 0)::bigint AS last_subscriber_id FROM ins;

-- name: BenchSendsSize :one
-- The sends table's size on disk with its indexes and TOAST, and its rows
-- (`bench --grow`, around the retention pass).
SELECT pg_total_relation_size('sends')::bigint AS bytes, (SELECT count(*) FROM sends)::bigint AS rows;

-- name: BenchMaxAckGap :one
-- The longest wait between two successive acknowledgements of one campaign, in
-- seconds: a stall of the send (a lock, a long statement beside it) shows here
-- whatever the mean rate.
SELECT coalesce(max(gap), 0)::float8 FROM (
    SELECT extract(epoch FROM sent_at - lag(sent_at) OVER (ORDER BY sent_at)) AS gap
    FROM sends WHERE campaign_id = @campaign_id AND sent_at IS NOT NULL) AS g;

-- name: BenchEventsFill :exec
-- One transaction's events for each of @accounts (`bench --events`): a batch of
-- @n outcomes as an acknowledgement writes it (send.sent, every 50th send.failed,
-- every 200th send.unknown; the payload SendAckMany builds), and @rows
-- subscriber.created event rows, at @at.
WITH batches AS (
    INSERT INTO event_batches (first_id, account_id, occurred_at, n, types, data)
    SELECT nextval('events_id_seq'), a.id, sqlc.arg('at')::timestamptz, sqlc.arg('n')::int, t.types, t.data
    FROM unnest(sqlc.arg('accounts')::bigint[]) WITH ORDINALITY AS a (id, o)
    CROSS JOIN LATERAL (
        SELECT array_agg(DISTINCT 'send.' || (x.d ->> 'status') ORDER BY 'send.' || (x.d ->> 'status')) AS types,
               array_agg(x.d ORDER BY x.k) AS data
        FROM (SELECT g.k, jsonb_build_object('campaign_id', a.id, 'send_id', sqlc.arg('seq')::bigint * 1024 + g.k,
                                             'email', 'r' || (sqlc.arg('seq')::bigint * 1024 + g.k) || '@example.com',
                                             'status', CASE WHEN g.k % 50 = 0 THEN 'failed' WHEN g.k % 200 = 7 THEN 'unknown' ELSE 'sent' END,
                                             'attempts', 1, 'provider_message_id', md5(g.k::text), 'error', NULL,
                                             'sender_id', NULL, 'subscriber_id', sqlc.arg('seq')::bigint * 1024 + g.k) AS d
              FROM generate_series(1, sqlc.arg('n')::int) AS g (k)) x) t
    WHERE sqlc.arg('n')::int > 0
    ORDER BY a.o
    RETURNING first_id
)
INSERT INTO events (account_id, type, occurred_at, data)
SELECT a.id, 'subscriber.created', sqlc.arg('at')::timestamptz,
       jsonb_build_object('subscriber_id', sqlc.arg('seq')::bigint * 1024 + g.k, 'email', 'new' || (sqlc.arg('seq')::bigint * 1024 + g.k) || '@example.com')
FROM unnest(sqlc.arg('accounts')::bigint[]) WITH ORDINALITY AS a (id, o), generate_series(1, sqlc.arg('rows')::int) AS g (k)
WHERE (SELECT count(*) FROM batches) >= 0
ORDER BY a.o, g.k;

-- name: BenchEventsAt :one
-- The reading position @off batches into the account's event batches (`bench --events`).
SELECT b.xid, b.first_id FROM event_batches b
WHERE b.account_id = @account_id
ORDER BY b.xid, b.first_id
OFFSET @off LIMIT 1;

-- name: BenchEventsVacuumAnalyze :exec
VACUUM ANALYZE events, event_batches;
