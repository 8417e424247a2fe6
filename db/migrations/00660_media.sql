-- +goose Up
-- The media library: an account's images, checked and re-encoded on upload
-- (internal/media), stored once per account by the SHA-256 of the stored bytes,
-- each with its thumbnail, served publicly at /media/{account_public_id}/{sha256}.{ext}.
-- Bytes live here, not on one machine's disk, so every replica serves every image,
-- a backup holds them, and deleting an account removes them.
CREATE TABLE media (
    id           bigserial   PRIMARY KEY,
    account_id   bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    sha256       bytea       NOT NULL CHECK (length(sha256) = 32),
    name         text        NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    content_type text        NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg', 'image/gif')),
    width        integer     NOT NULL CHECK (width > 0),
    height       integer     NOT NULL CHECK (height > 0),
    size         integer     NOT NULL CHECK (size > 0),
    content      bytea       NOT NULL,
    thumbnail    bytea       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, sha256)
);
CREATE INDEX media_account_idx ON media (account_id, id);

-- +goose Down
DROP TABLE media;
