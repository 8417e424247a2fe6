-- The operator's view of accounts (internal/operator): accounts as tenants, with
-- their suspension, deletion mark and quotas. A deleted account (deleted_at set)
-- is gone from here at once; the purger removes its rows later.

-- name: OperatorAccountList :many
SELECT * FROM accounts
WHERE deleted_at IS NULL AND id > @after_id
ORDER BY id
LIMIT @n;

-- name: OperatorAccountGet :one
SELECT * FROM accounts WHERE id = @id AND deleted_at IS NULL;

-- name: OperatorAccountSuspend :one
-- Idempotent: suspending a suspended account keeps its first suspension time.
UPDATE accounts SET suspended_at = coalesce(suspended_at, now())
WHERE id = @id AND deleted_at IS NULL
RETURNING *;

-- name: OperatorAccountResume :one
UPDATE accounts SET suspended_at = NULL
WHERE id = @id AND deleted_at IS NULL
RETURNING *;

-- name: OperatorAccountMarkDeleted :one
-- The account disappears from the API at once (its keys and sessions stop
-- authenticating, its work stops being claimed); the purger does the rest.
UPDATE accounts SET deleted_at = now()
WHERE id = @id AND deleted_at IS NULL
RETURNING id;

-- name: OperatorAccountSetQuotas :one
-- Each quota is set when its set_ flag is true (to a value, or NULL: no limit).
UPDATE accounts SET
    quota_subscribers = CASE WHEN @set_subscribers::bool THEN sqlc.narg('subscribers')::bigint ELSE quota_subscribers END,
    quota_senders = CASE WHEN @set_senders::bool THEN sqlc.narg('senders')::bigint ELSE quota_senders END,
    quota_messages_per_day = CASE WHEN @set_messages_per_day::bool THEN sqlc.narg('messages_per_day')::bigint
                             ELSE quota_messages_per_day END
WHERE id = @id AND deleted_at IS NULL
RETURNING *;

-- name: OperatorAccountNextDeleted :one
-- The next account marked for deletion, oldest first (accounts_deleted_idx).
SELECT id FROM accounts WHERE deleted_at IS NOT NULL ORDER BY id LIMIT 1;
