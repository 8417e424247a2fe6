-- Templates carry files too (the storage of migration 00280). A message made from
-- a template without files of its own gets the template's when it is accepted; a
-- campaign made from a template without files of its own gets them when it is
-- approved, as it gets the template's content: later edits of the template do not
-- reach either.

-- +goose Up
CREATE TABLE template_attachments (
    template_id  bigint  NOT NULL REFERENCES templates (id) ON DELETE CASCADE,
    position     integer NOT NULL CHECK (position >= 0),
    account_id   bigint  NOT NULL,
    filename     text    NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
    content_type text    NOT NULL,
    content_id   text    NOT NULL DEFAULT '',
    sha256       bytea   NOT NULL,
    PRIMARY KEY (template_id, position),
    FOREIGN KEY (account_id, sha256) REFERENCES attachment_blobs (account_id, sha256)
);
CREATE INDEX template_attachments_blob_idx ON template_attachments (account_id, sha256);

-- +goose Down
DROP TABLE template_attachments;
