-- name: AuditInsert :exec
-- Runs in the transaction of the change it records (internal/audit), or right
-- after a change that had none (in_change_tx false).
INSERT INTO audit_log (account_id, actor_type, actor_id, actor_label, action, target_type, target_id,
                       request_id, source_addr, detail, in_change_tx)
VALUES (@account_id, @actor_type, @actor_id, @actor_label, @action, @target_type, sqlc.narg('target_id'),
        @request_id, @source_addr, sqlc.narg('detail'), @in_change_tx);

-- name: AuditList :many
-- Newest first, keyed by id; every filter optional.
SELECT * FROM audit_log
WHERE account_id = @account_id
  AND (sqlc.narg('before_id')::bigint IS NULL OR id < sqlc.narg('before_id'))
  AND (sqlc.narg('actor_type')::text IS NULL OR actor_type = sqlc.narg('actor_type'))
  AND (sqlc.narg('actor_id')::bigint IS NULL OR actor_id = sqlc.narg('actor_id'))
  AND (sqlc.narg('action')::text IS NULL OR action = sqlc.narg('action'))
  AND (sqlc.narg('target_type')::text IS NULL OR target_type = sqlc.narg('target_type'))
  AND (sqlc.narg('target_id')::text IS NULL OR target_id = sqlc.narg('target_id'))
  AND (sqlc.narg('since')::timestamptz IS NULL OR created_at >= sqlc.narg('since'))
  AND (sqlc.narg('until')::timestamptz IS NULL OR created_at < sqlc.narg('until'))
ORDER BY id DESC
LIMIT @lim;

-- name: AuditDeleteRetired :execrows
-- Retention: up to n entries older than cutoff, oldest first, in one short
-- statement. Not a tenant query: the executors' maintenance runs it for every account.
DELETE FROM audit_log WHERE id IN (
    SELECT a.id FROM audit_log a WHERE a.created_at < @cutoff::timestamptz ORDER BY a.created_at LIMIT @n);
