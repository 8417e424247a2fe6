-- +goose Up
-- Layouts: an account's frames (HTML and text with one {{content}}) that Markdown
-- content is rendered into. At most one per account is the default, used by
-- Markdown content that names no layout.
CREATE TABLE layouts (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    html       text        NOT NULL,
    text       text        NOT NULL DEFAULT '',
    is_default boolean     NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, name),
    UNIQUE (account_id, id)
);
CREATE UNIQUE INDEX layouts_default_idx ON layouts (account_id) WHERE is_default;

-- Markdown content keeps its source in markdown; html and text (html_template and
-- text_template) hold what it composes to in its layout, which is what every
-- reader of those columns (approval's freeze, sequences, messages, the executor)
-- already sends. The layout is the account's own: the foreign key carries
-- account_id, so no row can name another tenant's layout.
ALTER TABLE templates
    ADD COLUMN content_type text NOT NULL DEFAULT 'html' CHECK (content_type IN ('html', 'markdown')),
    ADD COLUMN markdown     text NOT NULL DEFAULT '',
    ADD COLUMN layout_id    bigint,
    ADD CONSTRAINT templates_layout_fk FOREIGN KEY (account_id, layout_id) REFERENCES layouts (account_id, id);
CREATE INDEX templates_layout_idx ON templates (account_id, layout_id) WHERE content_type = 'markdown';

ALTER TABLE campaigns
    ADD COLUMN content_type text NOT NULL DEFAULT 'html' CHECK (content_type IN ('html', 'markdown')),
    ADD COLUMN markdown     text NOT NULL DEFAULT '',
    ADD COLUMN layout_id    bigint,
    ADD CONSTRAINT campaigns_layout_fk FOREIGN KEY (account_id, layout_id) REFERENCES layouts (account_id, id);
CREATE INDEX campaigns_layout_draft_idx ON campaigns (account_id, layout_id)
    WHERE content_type = 'markdown' AND status = 'draft';

-- +goose Down
DROP INDEX campaigns_layout_draft_idx;
ALTER TABLE campaigns DROP COLUMN layout_id, DROP COLUMN markdown, DROP COLUMN content_type;
DROP INDEX templates_layout_idx;
ALTER TABLE templates DROP COLUMN layout_id, DROP COLUMN markdown, DROP COLUMN content_type;
DROP TABLE layouts;
