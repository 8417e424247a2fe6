-- +goose Up
-- Media bytes may live outside PostgreSQL, in the configured store (a local
-- directory or an S3-compatible bucket, internal/media store.go), under
-- content-addressed keys: a row whose content and thumbnail are NULL has its
-- bytes there. Rows stored before keep their bytes here and are served from
-- here whatever the store, so nothing has to move.
ALTER TABLE media
    ALTER COLUMN content DROP NOT NULL,
    ALTER COLUMN thumbnail DROP NOT NULL,
    ADD CONSTRAINT media_bytes_together CHECK ((content IS NULL) = (thumbnail IS NULL));

-- +goose Down
-- Rows whose bytes are in a store cannot come back without them.
DELETE FROM media WHERE content IS NULL;
ALTER TABLE media
    DROP CONSTRAINT media_bytes_together,
    ALTER COLUMN content SET NOT NULL,
    ALTER COLUMN thumbnail SET NOT NULL;
