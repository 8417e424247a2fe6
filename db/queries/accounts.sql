-- name: AccountCreate :one
INSERT INTO accounts (name) VALUES (@name) RETURNING *;

-- name: AccountGetByID :one
SELECT * FROM accounts WHERE id = @id;

-- name: AccountGetFirstByName :one
SELECT * FROM accounts WHERE name = @name ORDER BY id LIMIT 1;

-- name: APIKeyCreate :one
INSERT INTO api_keys (account_id, name, prefix, token_hash, role)
VALUES (@account_id, @name, @prefix, @token_hash, @role)
RETURNING id, account_id, name, prefix, created_at;

-- name: APIKeyGetByPrefix :one
-- Looked up by the visible prefix; the caller compares token_hash in constant time.
-- touch_due says whether last_used_at is due to be written (APIKeyTouch), so a key in
-- steady use costs every request this one statement, not two.
SELECT id, account_id, token_hash, role,
       (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')::bool AS touch_due
FROM api_keys
WHERE prefix = @prefix AND revoked_at IS NULL;

-- name: APIKeyTouch :exec
-- last_used_at is advisory: written at most once a minute per key to spare the hot path.
UPDATE api_keys SET last_used_at = now()
WHERE id = @id AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
