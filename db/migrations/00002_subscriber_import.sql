-- Staging for bulk subscriber imports: rows are COPYed here inside the import's
-- transaction, upserted into subscribers with one INSERT … SELECT … ON CONFLICT, and
-- deleted before commit, so no other transaction ever sees them. UNLOGGED because the
-- rows never outlive their transaction: WAL for them would be pure cost.

-- +goose Up
CREATE SEQUENCE subscriber_import_seq;

CREATE UNLOGGED TABLE subscriber_import_rows (
    import_id   bigint NOT NULL,
    line        integer NOT NULL,
    email       text   NOT NULL,
    email_lower text   NOT NULL,
    -- NULL name or status: keep the existing subscriber's value (insert the default).
    name        text,
    status      text,
    attributes  jsonb  NOT NULL DEFAULT '{}'
);
-- The Go side rejects repeated addresses, so this key is unique; the upsert reads it back.
CREATE UNIQUE INDEX subscriber_import_rows_key ON subscriber_import_rows (import_id, email_lower);

-- Lists of subscribers filtered by an address prefix.
CREATE INDEX subscribers_email_prefix_idx ON subscribers (account_id, email_lower text_pattern_ops);

-- +goose Down
DROP INDEX subscribers_email_prefix_idx;
DROP TABLE subscriber_import_rows;
DROP SEQUENCE subscriber_import_seq;
