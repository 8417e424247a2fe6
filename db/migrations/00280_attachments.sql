-- Attachments (POST /v1/messages `attachments`, campaigns' `attachments`) and the
-- copy and reply lists of messages.
--
-- A file is stored once per account, addressed by the SHA-256 of its bytes
-- (attachment_blobs), and referenced by each message or campaign that carries it,
-- in order, with the name, type and content id that message gives it. A campaign's
-- file is referenced once and goes to every recipient. Blobs are per account, so
-- no tenant can learn from timing or storage whether another holds a file.
--
-- A blob no message or campaign references is deleted by maintenance
-- (AttachmentBlobDeleteUnreferenced) once last_used_at is older than a grace
-- period: a request storing a file bumps last_used_at (and so locks the row) in
-- the transaction that adds its reference, so the sweep, which locks with SKIP
-- LOCKED and re-checks last_used_at on the row it locked, never deletes a blob a
-- committing message is about to reference; the foreign keys would refuse it anyway.

-- +goose Up
CREATE TABLE attachment_blobs (
    account_id   bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    sha256       bytea       NOT NULL CHECK (length(sha256) = 32),
    size         integer     NOT NULL CHECK (size >= 0),
    content      bytea       NOT NULL,
    last_used_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, sha256)
);
CREATE INDEX attachment_blobs_last_used_idx ON attachment_blobs (last_used_at);

CREATE TABLE message_attachments (
    message_id   bigint  NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    position     integer NOT NULL CHECK (position >= 0),
    account_id   bigint  NOT NULL,
    filename     text    NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
    content_type text    NOT NULL,
    content_id   text    NOT NULL DEFAULT '',
    sha256       bytea   NOT NULL,
    PRIMARY KEY (message_id, position),
    FOREIGN KEY (account_id, sha256) REFERENCES attachment_blobs (account_id, sha256)
);
CREATE INDEX message_attachments_blob_idx ON message_attachments (account_id, sha256);

CREATE TABLE campaign_attachments (
    campaign_id  bigint  NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    position     integer NOT NULL CHECK (position >= 0),
    account_id   bigint  NOT NULL,
    filename     text    NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
    content_type text    NOT NULL,
    content_id   text    NOT NULL DEFAULT '',
    sha256       bytea   NOT NULL,
    PRIMARY KEY (campaign_id, position),
    FOREIGN KEY (account_id, sha256) REFERENCES attachment_blobs (account_id, sha256)
);
CREATE INDEX campaign_attachments_blob_idx ON campaign_attachments (account_id, sha256);

-- Copies and further Reply-To addresses of a message (reply_to keeps the first),
-- and how many files it carries (the executor loads them only when there are any).
ALTER TABLE messages
    ADD COLUMN cc               text[]   NOT NULL DEFAULT '{}',
    ADD COLUMN bcc              text[]   NOT NULL DEFAULT '{}',
    ADD COLUMN reply_to_more    text[]   NOT NULL DEFAULT '{}',
    ADD COLUMN attachment_count smallint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE messages DROP COLUMN cc, DROP COLUMN bcc, DROP COLUMN reply_to_more, DROP COLUMN attachment_count;
DROP TABLE campaign_attachments;
DROP TABLE message_attachments;
DROP TABLE attachment_blobs;
