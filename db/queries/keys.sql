-- name: APIKeyList :many
-- Newest first is what a person scanning their keys wants; keys per account are few,
-- but the page is still bounded and keyed by id.
SELECT id, name, prefix, created_at, last_used_at, revoked_at, role, permissions, list_ids
FROM api_keys
WHERE account_id = @account_id AND (sqlc.narg('before_id')::bigint IS NULL OR id < sqlc.narg('before_id'))
ORDER BY id DESC
LIMIT @lim;

-- name: APIKeyGet :one
SELECT id, name, prefix, created_at, last_used_at, revoked_at, role, permissions, list_ids
FROM api_keys
WHERE account_id = @account_id AND id = @key_id;

-- name: APIKeyRevoke :one
-- Revoking twice keeps the first time.
UPDATE api_keys SET revoked_at = coalesce(revoked_at, coalesce(sqlc.narg('now')::timestamptz, now()))
WHERE account_id = @account_id AND id = @key_id
RETURNING id, name, prefix, created_at, last_used_at, revoked_at, role, permissions, list_ids;

-- name: APIKeyRevokedNotify :exec
-- Runs in the revocation's transaction, so it is delivered on commit: every process
-- ends the key's event streams at once (postgres.AuthorityChannel).
SELECT pg_notify(@channel::text, 'key:' || @key_id::bigint);

-- name: LoginLinkCreate :exec
INSERT INTO login_links (account_id, token_hash, expires_at)
VALUES (@account_id, @token_hash, @expires_at);

-- name: LoginLinkUse :one
-- Single use in one statement: the first caller sets used_at and gets the account;
-- a second (or a late one) matches no row.
UPDATE login_links SET used_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE token_hash = @token_hash AND used_at IS NULL
  AND expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
RETURNING account_id;

-- name: LoginLinkPurge :execrows
-- Links are worth nothing once expired; bounded, run when a link is made.
DELETE FROM login_links WHERE id IN (
    SELECT l.id FROM login_links l WHERE l.expires_at < sqlc.arg('before')::timestamptz LIMIT 1000);

-- name: SessionCreate :exec
INSERT INTO dashboard_sessions (account_id, api_key_id, token_hash, expires_at)
VALUES (@account_id, sqlc.narg('api_key_id'), @token_hash, @expires_at);

-- name: SessionAccount :one
-- A session made with a key lasts no longer than the key, and has its role; one
-- made with a login link (no key) is full. A user's session lasts only while the
-- user is a member of its account, and carries the member's role as it is now;
-- needs_two_factor is a member of an account that requires a second factor who
-- has none yet (sent to enrol before anything else); a session signed in through
-- the account's identity provider (via_sso) is not: the provider's sign-in stands
-- for both factors there (docs/teams.md, Single sign-on). A deleted account's
-- sessions end at once; a suspended one's are found and refused (403).
SELECT s.id, s.api_key_id, s.account_id, s.expires_at, coalesce(k.role, 'full')::text AS role,
       k.permissions, k.list_ids, k.name AS key_name,
       s.user_id, coalesce(u.email, '')::text AS user_email, coalesce(m.role, '')::text AS member_role,
       (s.user_id IS NOT NULL AND NOT s.via_sso AND a.require_two_factor AND u.totp_confirmed_at IS NULL)::boolean AS needs_two_factor,
       s.via_sso,
       (a.suspended_at IS NOT NULL)::boolean AS suspended
FROM dashboard_sessions s
JOIN accounts a ON a.id = s.account_id
LEFT JOIN api_keys k ON k.id = s.api_key_id
LEFT JOIN users u ON u.id = s.user_id
LEFT JOIN memberships m ON m.user_id = s.user_id AND m.account_id = s.account_id
WHERE s.token_hash = @token_hash
  AND s.expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
  AND (s.api_key_id IS NULL OR k.revoked_at IS NULL)
  AND (s.user_id IS NULL OR m.user_id IS NOT NULL)
  AND a.deleted_at IS NULL;

-- name: SessionDelete :exec
-- Signing out, with the notification (on commit) that ends the event streams of
-- the stream tokens the session minted (postgres.AuthorityChannel); the tokens go
-- with the session (ON DELETE CASCADE).
WITH gone AS (
    DELETE FROM dashboard_sessions WHERE token_hash = @token_hash RETURNING id
)
SELECT pg_notify(@channel::text, 'session:' || gone.id) FROM gone;

-- name: SessionPurge :execrows
DELETE FROM dashboard_sessions WHERE id IN (
    SELECT s.id FROM dashboard_sessions s WHERE s.expires_at < sqlc.arg('before')::timestamptz LIMIT 1000);
