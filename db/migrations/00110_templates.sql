-- Templates as shared resources: a named subject/HTML/text triple that campaigns
-- reference and transactional messages render. A campaign that references one is
-- sent with the content copied into it when it is approved (in the approve
-- transaction), so editing the template later never changes an approved, running or
-- finished campaign.

-- +goose Up
CREATE TABLE templates (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name        text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    subject     text        NOT NULL,
    html        text        NOT NULL DEFAULT '',
    text        text        NOT NULL DEFAULT '',
    language    text        NOT NULL DEFAULT '',
    -- What previews render with when the caller gives no data: {{.Attributes.x}}.
    sample_data jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(sample_data) = 'object'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, name)
);
CREATE INDEX templates_account_id_idx ON templates (account_id, id);

-- The template a draft takes its content from at approval. A template a draft
-- still references cannot be deleted (the API answers 409); once a campaign is
-- approved the reference is history, and deleting the template clears it.
ALTER TABLE campaigns ADD COLUMN template_id bigint REFERENCES templates (id) ON DELETE SET NULL;
CREATE INDEX campaigns_template_idx ON campaigns (template_id) WHERE template_id IS NOT NULL;

-- +goose Down
ALTER TABLE campaigns DROP COLUMN template_id;
DROP TABLE templates;
