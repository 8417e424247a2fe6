-- Templates: the account's shared subject/HTML/text triples. Campaigns reference
-- them by id and copy their content at approval (CampaignFreezeTemplate);
-- transactional messages render them when they are accepted.

-- name: TemplateCreate :one
INSERT INTO templates (account_id, name, subject, html, text, language, sample_data, track_clicks)
VALUES (@account_id, @name, @subject, @html, @text, @language, @sample_data, @track_clicks)
RETURNING *;

-- name: TemplateGet :one
SELECT * FROM templates WHERE account_id = @account_id AND id = @id;

-- name: TemplateList :many
SELECT * FROM templates
WHERE account_id = @account_id AND id > @after_id
ORDER BY id
LIMIT @lim;

-- name: TemplateUpdate :one
-- The caller validates the templates as stored after the change, in the same
-- transaction, so a patch of one part is checked together with the others.
UPDATE templates SET
    name        = coalesce(sqlc.narg('name'), name),
    subject     = coalesce(sqlc.narg('subject'), subject),
    html        = coalesce(sqlc.narg('html'), html),
    text        = coalesce(sqlc.narg('text'), text),
    language    = coalesce(sqlc.narg('language'), language),
    sample_data = coalesce(sqlc.narg('sample_data'), sample_data),
    track_clicks = coalesce(sqlc.narg('track_clicks'), track_clicks),
    updated_at  = now()
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: TemplateDelete :execrows
-- A template that a draft campaign still takes its content from is kept (the
-- caller answers 409); approved and later campaigns carry their own copy.
DELETE FROM templates t
WHERE t.account_id = @account_id AND t.id = @id
  AND NOT EXISTS (SELECT 1 FROM campaigns c
                  WHERE c.account_id = @account_id AND c.template_id = t.id AND c.status = 'draft');

-- name: TemplateExists :one
SELECT EXISTS (SELECT 1 FROM templates WHERE account_id = @account_id AND id = @id);

-- name: CampaignSetTemplate :exec
-- Only a draft's template can change; the caller checked the template is the account's.
UPDATE campaigns SET template_id = @template_id, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft' AND kind = 'campaign';

-- name: CampaignFreezeTemplate :one
-- Runs in the approve transaction, after the draft → approved CAS: the content the
-- campaign sends is copied from its template now, so later edits of the template do
-- not reach it (an edit committing meanwhile is wholly before or after the copy).
UPDATE campaigns c SET
    subject       = t.subject,
    html_template = t.html,
    text_template = t.text,
    language      = CASE WHEN c.language = '' THEN t.language ELSE c.language END,
    updated_at    = now()
FROM templates t
WHERE c.account_id = @account_id AND c.id = @id AND t.id = c.template_id AND c.kind = 'campaign'
RETURNING c.*;

-- name: TemplateDuplicate :one
-- A new template with everything of the account's template @id: subject, bodies,
-- language, sample data and tracking switch, named "<name> (copy)", or "(copy 2)",
-- "(copy 3)", … when that name is taken (names are unique per account; cut to fit
-- 200 characters). Its attachments are copied by TemplateAttachmentsCopy in the same
-- transaction. Two duplicates at once may pick the same name: the second is a
-- conflict, which a retry resolves.
INSERT INTO templates (account_id, name, subject, html, text, language, sample_data, track_clicks,
                       content_type, markdown, blocks, layout_id)
SELECT t.account_id, n.name, t.subject, t.html, t.text, t.language, t.sample_data, t.track_clicks,
       t.content_type, t.markdown, t.blocks, t.layout_id
FROM templates t
CROSS JOIN LATERAL (
    SELECT left(t.name, 188) || CASE WHEN g = 1 THEN ' (copy)' ELSE ' (copy ' || g || ')' END AS name
    FROM generate_series(1, 1000) g
    WHERE NOT EXISTS (SELECT 1 FROM templates o
                      WHERE o.account_id = t.account_id
                        AND o.name = left(t.name, 188) || CASE WHEN g = 1 THEN ' (copy)' ELSE ' (copy ' || g || ')' END)
    ORDER BY g
    LIMIT 1) n
WHERE t.account_id = @account_id AND t.id = @id
RETURNING *;

-- name: TemplateAttachmentsCopy :exec
-- The attachments of the account's template @from_id on template @to_id (the same
-- stored blobs: an attachment is kept once per account by its hash).
INSERT INTO template_attachments (template_id, position, account_id, filename, content_type, content_id, sha256)
SELECT @to_id, a.position, a.account_id, a.filename, a.content_type, a.content_id, a.sha256
FROM template_attachments a
WHERE a.account_id = @account_id AND a.template_id = @from_id;
