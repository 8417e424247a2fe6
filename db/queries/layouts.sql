-- Layouts: the frames Markdown content is rendered into. Templates and draft
-- campaigns store what their Markdown composes to; a change of a layout (or of the
-- account's default) recomposes them in its transaction. Approved campaigns carry
-- their own copy and are never recomposed.

-- name: LayoutCreate :one
INSERT INTO layouts (account_id, name, html, text, header, footer, brand_primary, brand_background, brand_text, brand_link)
VALUES (@account_id, @name, @html, @text, @header, @footer, @brand_primary, @brand_background, @brand_text, @brand_link)
RETURNING *;

-- name: LayoutGet :one
SELECT * FROM layouts WHERE account_id = @account_id AND id = @id;

-- name: LayoutGetDefault :one
SELECT * FROM layouts WHERE account_id = @account_id AND is_default;

-- name: LayoutGetShare :one
-- Content composing with a layout holds it FOR SHARE until it commits: a change of
-- the layout waits, and its recomposition then sees the new content.
SELECT * FROM layouts WHERE account_id = @account_id AND id = @id FOR SHARE;

-- name: LayoutGetDefaultShare :one
SELECT * FROM layouts WHERE account_id = @account_id AND is_default FOR SHARE;

-- name: LayoutList :many
SELECT * FROM layouts
WHERE account_id = @account_id AND id > @after_id
ORDER BY id
LIMIT @lim;

-- name: LayoutUpdate :one
-- Locks the layout row: a template or draft saved meanwhile waits, then composes
-- with the new frame.
UPDATE layouts SET
    name       = coalesce(sqlc.narg('name'), name),
    html       = coalesce(sqlc.narg('html'), html),
    text       = coalesce(sqlc.narg('text'), text),
    header     = coalesce(sqlc.narg('header'), header),
    footer     = coalesce(sqlc.narg('footer'), footer),
    brand_primary    = coalesce(sqlc.narg('brand_primary'), brand_primary),
    brand_background = coalesce(sqlc.narg('brand_background'), brand_background),
    brand_text       = coalesce(sqlc.narg('brand_text'), brand_text),
    brand_link       = coalesce(sqlc.narg('brand_link'), brand_link),
    updated_at = now()
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: LayoutClearDefault :exec
UPDATE layouts SET is_default = false, updated_at = now()
WHERE account_id = @account_id AND is_default AND id <> @id;

-- name: LayoutSetDefault :exec
UPDATE layouts SET is_default = @is_default, updated_at = now()
WHERE account_id = @account_id AND id = @id;

-- name: LayoutDelete :execrows
-- A layout that a template or a draft campaign names, or the account's default,
-- is kept (the caller answers 409). Approved campaigns hold their composed copy
-- and no longer need it; their layout_id is cleared first (LayoutRelease).
DELETE FROM layouts l
WHERE l.account_id = @account_id AND l.id = @id AND NOT l.is_default
  AND NOT EXISTS (SELECT 1 FROM templates t WHERE t.account_id = @account_id AND t.layout_id = l.id)
  AND NOT EXISTS (SELECT 1 FROM campaigns c
                  WHERE c.account_id = @account_id AND c.layout_id = l.id AND c.status = 'draft');

-- name: LayoutRelease :exec
-- Campaigns past draft keep what they were approved with; the layout's name on them
-- goes with the layout.
UPDATE campaigns SET layout_id = NULL
WHERE account_id = @account_id AND layout_id = @id AND status <> 'draft';

-- name: LayoutExists :one
SELECT EXISTS (SELECT 1 FROM layouts WHERE account_id = @account_id AND id = @id);

-- name: TemplateMarkdownByLayout :many
-- The Markdown and block templates a layout frames: those naming it, and, when it is the
-- default (@is_default), those naming none. Locked, so a concurrent save of one
-- of them is wholly before or after the recomposition.
SELECT id, subject, sample_data, content_type, markdown, blocks, layout_id FROM templates
WHERE account_id = @account_id AND content_type IN ('markdown', 'blocks')
  AND (layout_id = @layout_id OR (layout_id IS NULL AND @is_default::boolean))
ORDER BY id
FOR UPDATE;

-- name: TemplateSetComposed :exec
UPDATE templates SET html = @html, text = @text, updated_at = now()
WHERE account_id = @account_id AND id = @id;

-- name: CampaignMarkdownDraftsByLayout :many
-- As TemplateMarkdownByLayout, for draft campaigns with Markdown or blocks of their own. A
-- campaign approved before this lock keeps what approval pinned.
SELECT id, subject, content_type, markdown, blocks, layout_id FROM campaigns
WHERE account_id = @account_id AND content_type IN ('markdown', 'blocks') AND status = 'draft'
  AND (layout_id = @layout_id OR (layout_id IS NULL AND @is_default::boolean))
ORDER BY id
FOR UPDATE;

-- name: CampaignSetComposed :exec
-- Only a draft: what an approved campaign sends was pinned at approval.
UPDATE campaigns SET html_template = @html, text_template = @text, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft';

-- name: TemplateSetContent :one
-- The content type, Markdown or block source and layout of a template (the caller composes
-- and stores html and text with TemplateSetComposed in the same transaction).
UPDATE templates SET
    content_type = @content_type,
    markdown     = @markdown,
    blocks       = sqlc.narg('blocks'),
    layout_id    = sqlc.narg('layout_id'),
    updated_at   = now()
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: CampaignSetContent :one
UPDATE campaigns SET
    content_type = @content_type,
    markdown     = @markdown,
    blocks       = sqlc.narg('blocks'),
    layout_id    = sqlc.narg('layout_id'),
    updated_at   = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft'
RETURNING *;
