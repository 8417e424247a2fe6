-- Sender pools (migration 00730): an account's ordered lists of its own senders.
-- Every statement filters on account_id.

-- name: PoolCreate :one
INSERT INTO sender_pools (account_id, name) VALUES (@account_id, @name)
RETURNING *;

-- name: PoolGet :one
SELECT * FROM sender_pools WHERE account_id = @account_id AND id = @id;

-- name: PoolGetForUpdate :one
SELECT * FROM sender_pools WHERE account_id = @account_id AND id = @id FOR UPDATE;

-- name: PoolList :many
-- Keyset pagination in id order.
SELECT * FROM sender_pools
WHERE account_id = @account_id AND id > @after_id
ORDER BY id
LIMIT @max_rows;

-- name: PoolRename :one
UPDATE sender_pools SET name = @name, updated_at = now()
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: PoolDelete :execrows
DELETE FROM sender_pools WHERE account_id = @account_id AND id = @id;

-- name: PoolStreamLock :many
-- The pool's live message stream, locked before PoolRetireStream in the
-- deletion's transaction, as SenderStreamLock does for a sender's: a message
-- being added to it holds it FOR SHARE (MessageStreamEnsure) until it commits.
SELECT id FROM campaigns
WHERE account_id = @account_id AND pool_id = @id::bigint AND kind = 'messages' AND status = 'sending'
FOR UPDATE;

-- name: PoolRetireStream :exec
-- Retires the pool's message stream when nothing of it is left to send
-- (cancelled and detached from the pool, its settled rows kept), as
-- SenderRetireStream does; one with queued or in-flight messages keeps the pool
-- in use. sends_claim_idx and sends_lease_idx hold exactly those rows.
UPDATE campaigns c
SET status = 'cancelled', cancelled_at = now(), pool_id = NULL, updated_at = now()
WHERE c.account_id = @account_id AND c.pool_id = @id::bigint AND c.kind = 'messages' AND c.status = 'sending'
  AND NOT EXISTS (SELECT 1 FROM sends s WHERE s.campaign_id = c.id AND s.status = 'queued')
  AND NOT EXISTS (SELECT 1 FROM sends s WHERE s.campaign_id = c.id AND s.status = 'sending');

-- name: PoolInUse :one
-- Whether a campaign (or a live message stream) names the pool (the foreign key
-- refuses the delete anyway; this names the reason).
SELECT EXISTS (SELECT 1 FROM campaigns WHERE account_id = @account_id AND pool_id = @id::bigint) AS in_use;

-- name: PoolMembersClear :exec
DELETE FROM sender_pool_members WHERE account_id = @account_id AND pool_id = @pool_id;

-- name: PoolMembersSet :execrows
-- Inserts the members in the order given (position 0: the primary), each only if
-- it is one of the account's own senders: fewer rows than ids names a missing one.
INSERT INTO sender_pool_members (pool_id, account_id, position, sender_id)
SELECT @pool_id::bigint, @account_id::bigint, (m.ord - 1)::smallint, m.sid
FROM unnest(@sender_ids::bigint[]) WITH ORDINALITY AS m (sid, ord)
WHERE EXISTS (SELECT 1 FROM senders s WHERE s.account_id = @account_id::bigint AND s.id = m.sid);

-- name: PoolMembersOf :many
-- The members of the given pools, in pool and position order.
SELECT pool_id, position, sender_id FROM sender_pool_members
WHERE account_id = @account_id AND pool_id = ANY(@pool_ids::bigint[])
ORDER BY pool_id, position;

-- name: PoolRoute :many
-- The executor's view of a pool: its senders in order with whether each is held
-- (paused after repeated auth/config failures, or its route's complaint guard
-- tripped): a held sender is passed over for the next.
SELECT m.sender_id,
       (s.paused_reason IS NOT NULL OR EXISTS (
            SELECT 1 FROM complaint_guards g WHERE g.account_id = m.account_id AND g.sender_key = m.sender_id
       ))::bool AS held
FROM sender_pool_members m
JOIN senders s ON s.account_id = m.account_id AND s.id = m.sender_id
WHERE m.account_id = @account_id AND m.pool_id = @pool_id
ORDER BY m.position;
