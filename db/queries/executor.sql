-- Campaign queries of the executor: start, list what is being sent, finish.

-- name: CampaignListDue :many
-- Approved campaigns whose time has come; the start itself is a CAS, so replicas
-- listing the same ids is harmless.
SELECT id FROM campaigns
WHERE status = 'approved' AND scheduled_for <= coalesce(sqlc.narg('now')::timestamptz, now())
  -- A suspended account's approved campaigns start when it is resumed.
  AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = campaigns.account_id AND a.suspended_at IS NULL AND a.deleted_at IS NULL)
ORDER BY scheduled_for, id
LIMIT 100;

-- name: CampaignListSending :many
-- Everything a sender needs of the campaigns being sent; the dispatcher deals them
-- round-robin per account.
-- A message stream (kind 'messages') is listed too: it is always sending. The
-- account's default stream (no sender_id) sends through the account's default
-- sender as it is now (stream_sender_id; none: the environment's provider), so a
-- tenant's transactional mail leaves through the tenant's own sender; the stream
-- of messages that named a sender sends through that sender, and that of messages
-- that named a pool through the pool (sender_paused false: the pool passes over a
-- held member itself), like their campaigns.
-- sender_paused: the stream's sender is paused after repeated auth/config failures;
-- a stream cannot be paused like a campaign (it is always sending), so its messages
-- wait unclaimed until the sender is fixed, at most MessageFailHeld's hold_max.
SELECT c.id, c.account_id, c.subject, c.from_email, c.from_name, c.reply_to, c.html_template,
       c.text_template, c.ambiguous_policy, c.sender_id, c.pool_id, c.kind, c.track_clicks, c.track_opens, c.ab_variants, ds.id AS stream_sender_id,
       (coalesce(ns.paused_reason, ds.paused_reason) IS NOT NULL)::bool AS sender_paused,
       -- The sending window (internal/sendwindow) and the zone it falls back to:
       -- a step campaign's is its sequence's, read in the sequence's zone.
       coalesce(c.send_window, sq.send_window, 'null'::jsonb)::text AS send_window,
       coalesce(sq.time_zone, (SELECT a.time_zone FROM accounts a WHERE a.id = c.account_id))::text AS window_zone
FROM campaigns c
LEFT JOIN sequence_steps st ON c.kind = 'sequence' AND st.account_id = c.account_id AND st.campaign_id = c.id
LEFT JOIN sequences sq ON sq.account_id = st.account_id AND sq.id = st.sequence_id
LEFT JOIN senders ds ON c.kind = 'messages' AND c.sender_id IS NULL AND c.pool_id IS NULL
                      AND ds.account_id = c.account_id AND ds.is_default
LEFT JOIN senders ns ON c.kind = 'messages' AND ns.account_id = c.account_id AND ns.id = c.sender_id
WHERE c.status = 'sending'
  -- A suspended (or deleted) account's campaigns are not dealt: nothing polls them.
  AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = c.account_id AND a.suspended_at IS NULL AND a.deleted_at IS NULL)
ORDER BY c.account_id, c.id;

-- name: CampaignLockSending :one
-- The finish's first step, in the finish's transaction: the campaign row locked
-- FOR UPDATE while it is still sending. Statements that may requeue a row (acks,
-- releases, the rescuer) read the campaign FOR SHARE, so once this lock is held
-- every such statement has committed (and CampaignFinish, a new statement with a
-- new snapshot, sees its rows) or waits and then sees the campaign 'sent'.
-- Only a campaign of kind 'campaign' finishes: a message stream or a sequence's
-- step campaign (always sending while it lives) is not locked for nothing each
-- time a claim of it comes back empty.
SELECT id FROM campaigns WHERE id = @campaign_id AND status = 'sending' AND kind = 'campaign' FOR UPDATE;

-- name: CampaignFinish :one
-- sending → sent once nothing is left to send or in flight; runs after
-- CampaignLockSending in one transaction. The queued rows are looked for in
-- sends_claim_idx and the rows in flight in sends_lease_idx (a few per worker of
-- every campaign), the two partial indexes that hold exactly them, so the check
-- costs the same on a campaign of any size: the executor runs it on index paths
-- (SendPlanIndexed), as planned from statistics that say most rows are queued (taken
-- right after a large build) an EXISTS was a sequential scan, or a walk of the
-- campaign's rows by (campaign_id, subscriber_id), that read them all when none
-- was. A message stream never finishes. The campaign.sent event is written by the
-- same statement.
WITH finished AS (
    UPDATE campaigns
    SET status = 'sent',
        finished_at = coalesce(sqlc.narg('now')::timestamptz, now()),
        updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
    WHERE campaigns.id = @campaign_id AND campaigns.status = 'sending' AND campaigns.kind = 'campaign'
      -- The first queued row in the claim's order, which only sends_claim_idx
      -- gives: an EXISTS could walk the campaign's rows by another index.
      AND (SELECT sends.id FROM sends
           WHERE sends.campaign_id = @campaign_id AND sends.status = 'queued'
           ORDER BY sends.next_attempt_at, sends.id LIMIT 1) IS NULL
      AND NOT EXISTS (
          SELECT 1 FROM sends
          WHERE sends.campaign_id = @campaign_id AND sends.status = 'sending')
    RETURNING campaigns.id, campaigns.account_id, campaigns.name, campaigns.status
), finished_event AS (
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT c.account_id, 'campaign.sent', coalesce(sqlc.narg('now')::timestamptz, now()),
           jsonb_build_object('campaign_id', c.id, 'name', c.name, 'status', c.status)
    FROM finished c
)
SELECT f.id FROM finished f;

-- name: CampaignListCancelledWithQueued :many
-- Cancelled campaigns that still have queued rows to close (SendSweepCancelled).
-- Maintenance runs this every few seconds: each cancelled campaign is one probe of
-- sends_claim_idx, for its first queued row in the claim's order (as in
-- CampaignFinish). As an EXISTS, a semi-join, with statistics taken while a large
-- campaign was queued it was planned as a scan of every row of sends, 0.3 s a
-- second at 1,000,000 (`sendonce bench --grow`). The executor runs it on index
-- paths (SendPlanIndexed).
SELECT c.id, c.account_id FROM campaigns c
WHERE c.status = 'cancelled'
  AND (SELECT s.id FROM sends s WHERE s.campaign_id = c.id AND s.status = 'queued'
       ORDER BY s.next_attempt_at, s.id LIMIT 1) IS NOT NULL
LIMIT 100;

-- name: CampaignListFailedWithQueued :many
-- Failed campaigns that still have queued rows to delete (SendDeleteFailed); a
-- probe per campaign, as in CampaignListCancelledWithQueued.
SELECT c.id, c.account_id FROM campaigns c
WHERE c.status = 'failed'
  AND (SELECT s.id FROM sends s WHERE s.campaign_id = c.id AND s.status = 'queued'
       ORDER BY s.next_attempt_at, s.id LIMIT 1) IS NOT NULL
LIMIT 100;

-- name: CampaignNextDue :one
-- How long until the next approved campaign falls due, so the scheduler wakes for
-- it rather than up to a tick late (campaigns_due_idx). A wait, not a time: the
-- campaign starts by the database's clock (CampaignStartDue), which the
-- executor's own may be off from.
SELECT (extract(epoch FROM scheduled_for - coalesce(sqlc.narg('now')::timestamptz, now())) * 1e6)::bigint AS due_in_us
FROM campaigns
WHERE status = 'approved' AND scheduled_for IS NOT NULL
ORDER BY scheduled_for
LIMIT 1;

-- name: ExecutorRegister :one
-- A starting executor process's liveness row; its id stamps every row it claims.
-- This release reads event batches (00840_event_batches.sql): acknowledgements
-- write them once no registered executor is of an older one.
INSERT INTO executors (host, pid, started_at, heartbeat_at, reads_event_batches)
VALUES (@host, @pid, coalesce(sqlc.narg('now')::timestamptz, now()), coalesce(sqlc.narg('now')::timestamptz, now()), true)
RETURNING id;

-- name: ExecutorHeartbeat :execrows
-- Zero rows means another executor declared this one dead and deleted its row
-- (ExecutorDeleteDead): its claims may have been rescued, so it must register again
-- and drop what it still holds.
UPDATE executors SET heartbeat_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE id = @id;

-- name: ExecutorDeregister :exec
-- A graceful shutdown's last step. Rows it still holds as 'sending' (acks it could
-- not write) belong to no live executor from now on, and are rescued at once.
DELETE FROM executors WHERE id = @id;

-- name: ExecutorDeleteDead :execrows
-- Forgets executors whose heartbeat stopped for dead_after; their 'sending' rows
-- then belong to no registered executor, which SendRescueExpired treats alike.
DELETE FROM executors
WHERE heartbeat_at < coalesce(sqlc.narg('now')::timestamptz, now()) - @dead_after::interval;
