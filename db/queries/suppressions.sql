-- name: SuppressionAdd :one
-- Adding is idempotent: an address already suppressed keeps its first reason and
-- source, and the existing row comes back with inserted = false. A new suppression
-- writes its suppression.created event in the same statement.
WITH ins AS (
    INSERT INTO suppressions (account_id, email_lower, reason, source)
    VALUES (@account_id, @email_lower, @reason, @source)
    ON CONFLICT (account_id, email_lower) DO NOTHING
    RETURNING account_id, email_lower, reason, source, created_at
), created_event AS (
    INSERT INTO events (account_id, type, data)
    SELECT i.account_id, 'suppression.created',
           jsonb_build_object('email', i.email_lower, 'reason', i.reason, 'source', i.source)
    FROM ins i
)
SELECT ins.account_id, ins.email_lower, ins.reason, ins.source, ins.created_at, true AS inserted FROM ins
UNION ALL
SELECT s.account_id, s.email_lower, s.reason, s.source, s.created_at, false AS inserted
FROM suppressions s
WHERE s.account_id = @account_id AND s.email_lower = @email_lower AND NOT EXISTS (SELECT 1 FROM ins);

-- name: SubscriberMarkUnsubscribed :exec
-- An unsubscribe also shows on the subscriber; the suppression is what the executor obeys.
UPDATE subscribers SET status = 'unsubscribed', updated_at = now()
WHERE account_id = @account_id AND email_lower = @email_lower AND status <> 'unsubscribed';

-- name: SuppressionList :many
-- Suppressions have no id: the page key is the address itself (the primary key).
SELECT account_id, email_lower, reason, source, created_at
FROM suppressions
WHERE account_id = @account_id AND email_lower > @after_email
ORDER BY email_lower
LIMIT @lim;

-- name: SuppressionGet :one
-- One address's suppression: why and since when (a subscriber's page shows it).
SELECT account_id, email_lower, reason, source, created_at
FROM suppressions
WHERE account_id = @account_id AND email_lower = @email_lower;

-- name: SuppressionRemove :one
-- Returns how many rows went (0 or 1); a removal writes its suppression.deleted
-- event in the same statement.
WITH removed AS (
    DELETE FROM suppressions x
    WHERE x.account_id = sqlc.arg('account_id')::bigint AND x.email_lower = sqlc.arg('email_lower')::text
    RETURNING x.account_id, x.email_lower, x.reason, x.source
), deleted_event AS (
    INSERT INTO events (account_id, type, data)
    SELECT r.account_id, 'suppression.deleted',
           jsonb_build_object('email', r.email_lower, 'reason', r.reason, 'source', r.source)
    FROM removed r
)
SELECT count(*) FROM removed;

-- name: SuppressionFindByEmails :many
-- A campaign test send skips suppressed addresses, as the executor does, and says why.
SELECT email_lower, reason FROM suppressions
WHERE account_id = @account_id AND email_lower = ANY(@emails::text[]);

-- name: SuppressionRecallErased :execrows
-- Suppresses by address the addresses whose keyed hash an erasure left (pairs of
-- emails[i], hashes[i]; suppression.Erased.Recall), so the build's and the claim's
-- look-ups by address find them. The hash row stays: the address may be erased
-- again and come back again.
WITH a AS (
    SELECT unnest(@emails::text[]) AS email_lower, unnest(@hashes::text[]) AS hash
)
INSERT INTO suppressions (account_id, email_lower, reason, source)
SELECT DISTINCT @account_id::bigint, a.email_lower, 'erasure', 'erasure'
FROM a
WHERE EXISTS (SELECT 1 FROM suppressions h WHERE h.account_id = @account_id::bigint AND h.email_lower = a.hash)
ON CONFLICT (account_id, email_lower) DO NOTHING;
