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
