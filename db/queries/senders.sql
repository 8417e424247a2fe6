-- name: SenderCreate :one
INSERT INTO senders (account_id, name, type, settings, secret_key_id, secret, secret_hint,
                     rate_per_second, max_connections, allowed_from, is_default, domain_limits, warmup)
VALUES (@account_id, @name, @type, @settings, @secret_key_id, @secret, @secret_hint,
        @rate_per_second, @max_connections, @allowed_from, @is_default, @domain_limits, @warmup)
RETURNING *;

-- name: SenderList :many
-- Keyset pagination in id order.
SELECT * FROM senders
WHERE account_id = @account_id AND id > @after_id
ORDER BY id
LIMIT @max_rows;

-- name: SenderGet :one
SELECT * FROM senders WHERE account_id = @account_id AND id = @id;

-- name: SenderGetForUpdate :one
SELECT * FROM senders WHERE account_id = @account_id AND id = @id FOR UPDATE;

-- name: SenderUpdate :one
-- Replaces every mutable field (the service merges the patch into the row it read
-- under FOR UPDATE); a new secret resets the health counters, the old one having
-- been the likely cause.
UPDATE senders
SET name = @name, settings = @settings, secret_key_id = @secret_key_id, secret = @secret,
    secret_hint = @secret_hint, rate_per_second = @rate_per_second,
    max_connections = @max_connections, allowed_from = @allowed_from, is_default = @is_default,
    domain_limits = @domain_limits, warmup = @warmup,
    auth_failures = CASE WHEN @secret_changed::boolean THEN 0 ELSE auth_failures END,
    paused_reason = CASE WHEN @secret_changed::boolean THEN NULL ELSE paused_reason END,
    paused_at = CASE WHEN @secret_changed::boolean THEN NULL ELSE paused_at END,
    updated_at = now()
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: SenderClearDefault :exec
-- Run before making another sender the default, in the same transaction: the
-- partial unique index allows one default per account.
UPDATE senders SET is_default = false, updated_at = now()
WHERE account_id = @account_id AND is_default AND id <> @id;

-- name: SenderDelete :execrows
DELETE FROM senders WHERE account_id = @account_id AND id = @id;

-- name: SenderInUse :one
-- Whether a campaign that may still send names the sender, or a sender pool
-- holds it (a pool's member cannot be deleted: take it out of the pool first).
SELECT (EXISTS (
    SELECT 1 FROM campaigns c
    WHERE c.account_id = @account_id AND c.sender_id = @id
) OR EXISTS (
    SELECT 1 FROM sender_pool_members m
    WHERE m.account_id = @account_id AND m.sender_id = @id
))::bool AS in_use;

-- name: SenderSecretsAll :many
-- Every stored credential, for the start-up check that the key ring decrypts them
-- and for rotation. Not a tenant query: it serves the operator, never a request.
SELECT id, account_id, secret_key_id, secret FROM senders WHERE secret IS NOT NULL ORDER BY id;

-- name: SenderSecretReplace :execrows
-- Rotation's compare-and-set: re-encrypted under the ring's first key only if the
-- row still holds the ciphertext that was decrypted.
UPDATE senders SET secret_key_id = @secret_key_id, secret = @secret
WHERE id = @id AND account_id = @account_id AND secret = @old_secret;

-- name: SenderForSend :one
-- The sender a campaign sends through: the one it names, else the account's
-- default; no row means the environment's provider.
SELECT s.* FROM senders s
WHERE s.account_id = @account_id
  AND (s.id = sqlc.narg('sender_id')::bigint OR (sqlc.narg('sender_id')::bigint IS NULL AND s.is_default));

-- name: SenderRecordAuthFailure :one
-- Counts one more consecutive auth/config failure; at @failure_limit the sender is marked
-- paused (once: paused_reason stays as first written) and the caller pauses its campaigns.
UPDATE senders
SET auth_failures = auth_failures + 1,
    paused_reason = CASE WHEN auth_failures + 1 >= @failure_limit::int AND paused_reason IS NULL
                         THEN @reason::text ELSE paused_reason END,
    paused_at = CASE WHEN auth_failures + 1 >= @failure_limit::int AND paused_at IS NULL
                     THEN now() ELSE paused_at END
WHERE account_id = @account_id AND id = @id
RETURNING auth_failures, paused_reason;

-- name: SenderRecordSuccess :exec
-- A message the sender accepted ends a run of auth failures.
UPDATE senders SET auth_failures = 0
WHERE account_id = @account_id AND id = @id AND auth_failures <> 0;

-- name: SenderPauseCampaigns :many
-- Pauses the sending campaigns that go through the sender (a sending campaign's
-- sender is pinned at start), with the reason; resume continues them after the fix.
-- Only campaigns: a message stream is always sending (campaigns_stream_sending) and
-- waits instead while its sender is paused (CampaignListSending's sender_paused).
UPDATE campaigns c
SET status = 'paused', paused_reason = @reason::text, updated_at = now()
WHERE c.account_id = @account_id AND c.kind = 'campaign' AND c.status = 'sending'
  AND c.sender_id = @sender_id::bigint
RETURNING c.id;

-- name: SenderResumeHealth :exec
-- Resuming a campaign clears the pause of the sender it goes through (its own, else
-- the account default), so the next failures count afresh.
UPDATE senders SET auth_failures = 0, paused_reason = NULL, paused_at = NULL
WHERE account_id = @account_id
  AND (id = sqlc.narg('sender_id')::bigint OR (sqlc.narg('sender_id')::bigint IS NULL AND is_default))
  AND (auth_failures <> 0 OR paused_reason IS NOT NULL);

-- name: SenderStreamLock :many
-- The sender's live message stream, locked before SenderRetireStream in the
-- deletion's transaction: a message being added to it holds it FOR SHARE
-- (MessageStreamEnsure) until it commits, so once this lock is held the next
-- statement sees every message the stream will ever get.
SELECT id FROM campaigns
WHERE account_id = @account_id AND sender_id = @id AND kind = 'messages' AND status = 'sending'
FOR UPDATE;

-- name: SenderRetireStream :exec
-- Retires the sender's message stream when nothing of it is left to send: cancelled
-- and detached from the sender, its settled rows kept (the messages' history). A
-- stream with queued or in-flight messages stays, and keeps the sender in use.
-- Queued rows are looked for in sends_claim_idx and rows in flight in
-- sends_lease_idx, the partial indexes that hold them (migration 00160).
UPDATE campaigns c
SET status = 'cancelled', cancelled_at = now(), sender_id = NULL, updated_at = now()
WHERE c.account_id = @account_id AND c.sender_id = @id AND c.kind = 'messages' AND c.status = 'sending'
  AND NOT EXISTS (SELECT 1 FROM sends s WHERE s.campaign_id = c.id AND s.status = 'queued')
  AND NOT EXISTS (SELECT 1 FROM sends s WHERE s.campaign_id = c.id AND s.status = 'sending');

-- name: SenderSecretSet :one
-- Stores a new sender's credentials, sealed once its id is known (the ciphertext
-- is bound to the sender id), in the transaction that created it.
UPDATE senders SET secret_key_id = @secret_key_id, secret = @secret, secret_hint = @secret_hint
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: SenderWarmupTake :one
-- Takes @want sends from a warming-up sender's cap of @day (@day_cap), for every
-- executor process at once: the row lock orders concurrent takes, and each SET
-- expression reads the row as it was, so last_grant is what this take got (0:
-- the day's cap is used up). Not a tenant query: the executor runs it.
INSERT INTO sender_warmup_usage AS u (account_id, sender_id, day, used, last_grant)
VALUES (@account_id, @sender_id, @day, least(@want::integer, @day_cap::integer),
        least(@want::integer, @day_cap::integer))
ON CONFLICT (sender_id, day) DO UPDATE
SET used = greatest(u.used, least(u.used + @want::integer, @day_cap::integer)),
    last_grant = greatest(u.used, least(u.used + @want::integer, @day_cap::integer)) - u.used
RETURNING last_grant;

-- name: SenderWarmupUsed :one
-- What the sender used of @day's warm-up cap (0 when it sent nothing that day).
SELECT coalesce((SELECT used FROM sender_warmup_usage
                 WHERE account_id = @account_id AND sender_id = @sender_id AND day = @day), 0)::integer AS used;
