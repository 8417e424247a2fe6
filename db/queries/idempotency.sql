-- name: IdempotencyClaim :one
-- Claims (account, key) for this request before the handler runs. A new key inserts;
-- an expired one (older than 24 hours) is taken over as new; a live one returns no row,
-- and the caller reads it with IdempotencyGet.
INSERT INTO idempotency_keys (account_id, key, method, path, request_hash, created_at, expires_at)
VALUES (@account_id, @key, @method, @path, @request_hash,
        coalesce(sqlc.narg('now')::timestamptz, now()),
        coalesce(sqlc.narg('now')::timestamptz, now()) + interval '24 hours')
ON CONFLICT (account_id, key) DO UPDATE SET
    method = excluded.method, path = excluded.path, request_hash = excluded.request_hash,
    response_status = NULL, response_body = NULL,
    created_at = excluded.created_at, expires_at = excluded.expires_at
WHERE idempotency_keys.expires_at <= excluded.created_at
RETURNING key;

-- name: IdempotencyGet :one
SELECT method, path, request_hash, response_status, response_body
FROM idempotency_keys
WHERE account_id = @account_id AND key = @key;

-- name: IdempotencySave :exec
UPDATE idempotency_keys SET response_status = @response_status, response_body = @response_body
WHERE account_id = @account_id AND key = @key;

-- name: IdempotencyRelease :exec
-- A request that ended without a response to store (panic, aborted) frees its key so
-- the client can retry.
DELETE FROM idempotency_keys
WHERE account_id = @account_id AND key = @key AND response_status IS NULL;

-- name: IdempotencyPurgeExpired :execrows
-- Deletes up to @max expired keys (of any account: this is housekeeping, not a tenant
-- action). Bounded so one call never holds many locks; the expires_at index serves it.
DELETE FROM idempotency_keys
WHERE (account_id, key) IN (
    SELECT k.account_id, k.key FROM idempotency_keys k
    WHERE k.expires_at <= coalesce(sqlc.narg('now')::timestamptz, now())
    ORDER BY k.expires_at
    LIMIT @max
);
