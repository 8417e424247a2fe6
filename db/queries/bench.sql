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

-- name: BenchLastSentAt :one
-- When the campaign's last message was acknowledged: the end of the drain, before
-- the finalizer notices the campaign is done.
SELECT max(sent_at)::timestamptz FROM sends WHERE campaign_id = @campaign_id;

-- name: BenchDeleteCampaignSends :exec
-- Empties the account's send rows between points of the executors curve (every
-- campaign of the bench account is done by then), so each point starts from a
-- table of the same size.
DELETE FROM sends WHERE account_id = @account_id;
