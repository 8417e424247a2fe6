-- name: SuppressionAdd :one
-- Adding is idempotent: an address already suppressed keeps its first reason and
-- source, and the existing row comes back with inserted = false.
WITH ins AS (
    INSERT INTO suppressions (account_id, email_lower, reason, source)
    VALUES (@account_id, @email_lower, @reason, @source)
    ON CONFLICT (account_id, email_lower) DO NOTHING
    RETURNING account_id, email_lower, reason, source, created_at
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

-- name: SuppressionRemove :execrows
DELETE FROM suppressions WHERE account_id = @account_id AND email_lower = @email_lower;

-- name: SuppressionFindByEmails :many
-- A campaign test send skips suppressed addresses, as the executor does, and says why.
SELECT email_lower, reason FROM suppressions
WHERE account_id = @account_id AND email_lower = ANY(@emails::text[]);
