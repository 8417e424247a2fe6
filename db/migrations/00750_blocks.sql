-- +goose Up
-- Block designs: content_type 'blocks' keeps the builder's JSON design in blocks;
-- html and text (html_template and text_template) hold what it renders to in its
-- layout, as for Markdown, so every reader of those columns sends it unchanged
-- and approval pins it.
ALTER TABLE templates
    DROP CONSTRAINT templates_content_type_check,
    ADD CONSTRAINT templates_content_type_check CHECK (content_type IN ('html', 'markdown', 'blocks')),
    ADD COLUMN blocks jsonb,
    ADD CONSTRAINT templates_blocks_check CHECK ((content_type = 'blocks') = (blocks IS NOT NULL));
DROP INDEX templates_layout_idx;
CREATE INDEX templates_layout_idx ON templates (account_id, layout_id) WHERE content_type <> 'html';

ALTER TABLE campaigns
    DROP CONSTRAINT campaigns_content_type_check,
    ADD CONSTRAINT campaigns_content_type_check CHECK (content_type IN ('html', 'markdown', 'blocks')),
    ADD COLUMN blocks jsonb,
    ADD CONSTRAINT campaigns_blocks_check CHECK ((content_type = 'blocks') = (blocks IS NOT NULL));
DROP INDEX campaigns_layout_draft_idx;
CREATE INDEX campaigns_layout_draft_idx ON campaigns (account_id, layout_id)
    WHERE content_type <> 'html' AND status = 'draft';

-- +goose Down
DROP INDEX campaigns_layout_draft_idx;
CREATE INDEX campaigns_layout_draft_idx ON campaigns (account_id, layout_id)
    WHERE content_type = 'markdown' AND status = 'draft';
UPDATE campaigns SET content_type = 'html', blocks = NULL WHERE content_type = 'blocks';
ALTER TABLE campaigns
    DROP CONSTRAINT campaigns_blocks_check,
    DROP COLUMN blocks,
    DROP CONSTRAINT campaigns_content_type_check,
    ADD CONSTRAINT campaigns_content_type_check CHECK (content_type IN ('html', 'markdown'));
DROP INDEX templates_layout_idx;
CREATE INDEX templates_layout_idx ON templates (account_id, layout_id) WHERE content_type = 'markdown';
UPDATE templates SET content_type = 'html', blocks = NULL WHERE content_type = 'blocks';
ALTER TABLE templates
    DROP CONSTRAINT templates_blocks_check,
    DROP COLUMN blocks,
    DROP CONSTRAINT templates_content_type_check,
    ADD CONSTRAINT templates_content_type_check CHECK (content_type IN ('html', 'markdown'));
