-- The media library (migration 00660): an account's images and their thumbnails.

-- name: MediaInsert :one
-- Stores an image unless the account already has these bytes: the same upload
-- twice is one image (the caller then reads the stored one, MediaGetBySha).
-- content and thumbnail are NULL when the bytes are in the media store
-- (migration 00760), written before this row.
INSERT INTO media (account_id, sha256, name, content_type, width, height, size, content, thumbnail)
VALUES (@account_id, @sha256, @name, @content_type, @width, @height, @size, sqlc.narg('content')::bytea, sqlc.narg('thumbnail')::bytea)
ON CONFLICT (account_id, sha256) DO NOTHING
RETURNING id, account_id, sha256, name, content_type, width, height, size, created_at;

-- name: MediaGetBySha :one
SELECT id, account_id, sha256, name, content_type, width, height, size, created_at
FROM media WHERE account_id = @account_id AND sha256 = @sha256;

-- name: MediaGet :one
SELECT id, account_id, sha256, name, content_type, width, height, size, created_at
FROM media WHERE account_id = @account_id AND id = @id;

-- name: MediaList :many
-- Newest first, keyset-paged by id (media_account_idx).
SELECT id, account_id, sha256, name, content_type, width, height, size, created_at
FROM media
WHERE account_id = @account_id AND (sqlc.narg('before_id')::bigint IS NULL OR id < sqlc.narg('before_id')::bigint)
ORDER BY id DESC
LIMIT @lim;

-- name: MediaUsage :one
-- What the account's library holds, for its quotas. The count is bounded by the
-- quota itself, so this reads at most that many rows.
SELECT count(*)::bigint AS images, coalesce(sum(size), 0)::bigint AS bytes
FROM media WHERE account_id = @account_id;

-- name: MediaLockAccount :exec
-- Serialises an account's uploads for the quota check and the insert (a
-- transaction-scoped advisory lock on the account, in media's own key space).
SELECT pg_advisory_xact_lock(hashtextextended('media', 0) # @account_id::bigint);

-- name: MediaDelete :execrows
DELETE FROM media WHERE account_id = @account_id AND id = @id;

-- name: MediaUsedBy :many
-- Campaigns past draft whose content shows the image (its public path): their
-- archive and web view show it, so it must stay. A draft may lose it (its
-- preview then shows a broken image). An A/B test's variants (migration 00630)
-- count as their campaign's content. Read on delete only.
SELECT c.id FROM campaigns c
WHERE c.account_id = @account_id AND c.status <> 'draft'
  AND (strpos(c.html_template, @path::text) > 0 OR strpos(c.text_template, @path::text) > 0
       OR EXISTS (SELECT 1 FROM campaign_variants v
                  WHERE v.account_id = c.account_id AND v.campaign_id = c.id
                    AND (strpos(coalesce(v.html_template, ''), @path::text) > 0
                         OR strpos(coalesce(v.text_template, ''), @path::text) > 0)))
ORDER BY c.id
LIMIT 10;

-- name: MediaUsedByMessages :many
-- Transactional messages still stored (queued, sent, or kept until the account's
-- retention removes them) whose content shows the image: their web view renders
-- it, and a queued one has yet to send it. Read on delete only; it reads the
-- account's stored messages, which retention bounds.
SELECT m.id FROM messages m
WHERE m.account_id = @account_id
  AND (strpos(m.html, @path::text) > 0 OR strpos(m.text, @path::text) > 0)
ORDER BY m.id
LIMIT 10;

-- name: MediaShas :many
-- The SHA-256 of every image of the account: the bytes its rows name (Sweep).
SELECT sha256 FROM media WHERE account_id = @account_id;

-- name: MediaPublic :one
-- An image by its public address: the account's public id and the bytes' SHA-256.
-- content and thumbnail NULL: the bytes are in the media store, under the account id.
SELECT m.account_id, m.content_type, m.content, m.thumbnail
FROM media m JOIN accounts a ON a.id = m.account_id
WHERE a.public_id = @public_id AND m.sha256 = @sha256;

-- name: AccountPurgeMedia :execrows
-- A deleted account's images, a batch at a time (internal/account Purge).
DELETE FROM media WHERE id IN (SELECT m.id FROM media m WHERE m.account_id = @account_id ORDER BY m.id LIMIT @n);
