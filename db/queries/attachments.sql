-- Attachments: files stored once per account by SHA-256 (attachment_blobs) and
-- referenced, in order, by messages and campaigns (migration 00280).

-- name: AttachmentBlobPut :exec
-- Stores a file, or bumps last_used_at of the stored one. DO UPDATE (not DO
-- NOTHING) locks the row until the caller's transaction, which adds the reference,
-- commits: the unreferenced-blob sweep skips locked rows and re-checks
-- last_used_at on the rows it locks.
INSERT INTO attachment_blobs (account_id, sha256, size, content, last_used_at)
VALUES (@account_id, @sha256, @size, @content, coalesce(sqlc.narg('now')::timestamptz, now()))
ON CONFLICT (account_id, sha256) DO UPDATE SET last_used_at = excluded.last_used_at;

-- name: MessageAttachmentInsert :exec
INSERT INTO message_attachments (message_id, position, account_id, filename, content_type, content_id, sha256)
VALUES (@message_id, @position, @account_id, @filename, @content_type, @content_id, @sha256);

-- name: MessageAttachmentList :many
-- A message's files with their bytes, in order (the executor, building it).
SELECT a.position, a.filename, a.content_type, a.content_id, b.content
FROM message_attachments a
JOIN attachment_blobs b ON b.account_id = a.account_id AND b.sha256 = a.sha256
WHERE a.account_id = @account_id AND a.message_id = @message_id
ORDER BY a.position;

-- name: MessageAttachmentMeta :many
-- A message's files without their bytes (the API's answer).
SELECT a.position, a.filename, a.content_type, a.content_id, b.size, a.sha256
FROM message_attachments a
JOIN attachment_blobs b ON b.account_id = a.account_id AND b.sha256 = a.sha256
WHERE a.account_id = @account_id AND a.message_id = @message_id
ORDER BY a.position;

-- name: CampaignAttachmentDelete :exec
DELETE FROM campaign_attachments WHERE account_id = @account_id AND campaign_id = @campaign_id;

-- name: CampaignAttachmentInsert :exec
INSERT INTO campaign_attachments (campaign_id, position, account_id, filename, content_type, content_id, sha256)
VALUES (@campaign_id, @position, @account_id, @filename, @content_type, @content_id, @sha256);

-- name: CampaignAttachmentList :many
-- A campaign's files with their bytes, in order (the executor loads them once per
-- campaign and every recipient's message shares them; the sha256 keys the cache
-- of their base64 encoding, made once per campaign).
SELECT a.position, a.filename, a.content_type, a.content_id, b.content, a.sha256
FROM campaign_attachments a
JOIN attachment_blobs b ON b.account_id = a.account_id AND b.sha256 = a.sha256
WHERE a.account_id = @account_id AND a.campaign_id = @campaign_id
ORDER BY a.position;

-- name: CampaignAttachmentMeta :many
SELECT a.position, a.filename, a.content_type, a.content_id, b.size, a.sha256
FROM campaign_attachments a
JOIN attachment_blobs b ON b.account_id = a.account_id AND b.sha256 = a.sha256
WHERE a.account_id = @account_id AND a.campaign_id = @campaign_id
ORDER BY a.position;

-- name: AttachmentBlobDeleteUnreferenced :execrows
-- Maintenance (every account): deletes up to n files no message, campaign or template
-- references and none has stored since cutoff. FOR UPDATE re-checks last_used_at
-- on a row a storing transaction bumped meanwhile, and SKIP LOCKED passes over the
-- row such a transaction still holds, so a file about to be referenced stays.
WITH doomed AS (
    SELECT b.account_id, b.sha256
    FROM attachment_blobs b
    WHERE b.last_used_at < @cutoff::timestamptz
      AND NOT EXISTS (SELECT 1 FROM message_attachments m WHERE m.account_id = b.account_id AND m.sha256 = b.sha256)
      AND NOT EXISTS (SELECT 1 FROM campaign_attachments c WHERE c.account_id = b.account_id AND c.sha256 = b.sha256)
      AND NOT EXISTS (SELECT 1 FROM template_attachments t WHERE t.account_id = b.account_id AND t.sha256 = b.sha256)
    ORDER BY b.last_used_at
    LIMIT @n
    FOR UPDATE SKIP LOCKED
)
DELETE FROM attachment_blobs b USING doomed d WHERE b.account_id = d.account_id AND b.sha256 = d.sha256;

-- name: TemplateAttachmentDelete :exec
DELETE FROM template_attachments WHERE account_id = @account_id AND template_id = @template_id;

-- name: TemplateAttachmentInsert :exec
INSERT INTO template_attachments (template_id, position, account_id, filename, content_type, content_id, sha256)
VALUES (@template_id, @position, @account_id, @filename, @content_type, @content_id, @sha256);

-- name: TemplateAttachmentMeta :many
SELECT a.position, a.filename, a.content_type, a.content_id, b.size, a.sha256
FROM template_attachments a
JOIN attachment_blobs b ON b.account_id = a.account_id AND b.sha256 = a.sha256
WHERE a.account_id = @account_id AND a.template_id = @template_id
ORDER BY a.position;

-- name: MessageAttachmentCopyTemplate :execrows
-- A message made from a template, without files of its own, gets the template's
-- (references to the same stored files), in the transaction that accepts it.
INSERT INTO message_attachments (message_id, position, account_id, filename, content_type, content_id, sha256)
SELECT @message_id, t.position, t.account_id, t.filename, t.content_type, t.content_id, t.sha256
FROM template_attachments t
WHERE t.account_id = @account_id AND t.template_id = @template_id;

-- name: MessageSetAttachmentCount :exec
UPDATE messages SET attachment_count = @attachment_count WHERE account_id = @account_id AND id = @id;

-- name: CampaignAttachmentCopyTemplate :execrows
-- A campaign made from a template, without files of its own, gets the template's
-- at approval, in the approving transaction (as it gets the template's content).
INSERT INTO campaign_attachments (campaign_id, position, account_id, filename, content_type, content_id, sha256)
SELECT @campaign_id, t.position, t.account_id, t.filename, t.content_type, t.content_id, t.sha256
FROM template_attachments t
WHERE t.account_id = @account_id AND t.template_id = @template_id
  AND NOT EXISTS (SELECT 1 FROM campaign_attachments c WHERE c.campaign_id = @campaign_id);
