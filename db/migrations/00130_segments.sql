-- +goose Up
-- A segment is a saved filter over an account's subscribers: a jsonpath predicate
-- over attributes (stored as jsonpath, so PostgreSQL has parsed it once, at save
-- time) plus structured filters. Empty arrays and NULLs mean "no filter".
CREATE TABLE segments (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id     bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name           text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    match          jsonpath,
    statuses       text[]      NOT NULL DEFAULT '{}'
                               CHECK (statuses <@ ARRAY['pending', 'confirmed', 'unsubscribed']),
    list_ids       bigint[]    NOT NULL DEFAULT '{}',
    created_after  timestamptz,
    created_before timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, name),
    -- The target of the campaigns' tenant-scoped foreign key.
    UNIQUE (account_id, id)
);

-- A campaign may narrow its audience with one segment of the same account; a
-- segment in use cannot be deleted.
ALTER TABLE campaigns ADD COLUMN segment_id bigint,
    ADD CONSTRAINT campaigns_segment_fk FOREIGN KEY (account_id, segment_id)
        REFERENCES segments (account_id, id) ON DELETE RESTRICT;

-- jsonb_path_ops serves the @@ and @? operators the build and the preview use, for
-- predicates with equality on a path (e.g. $.plan == "pro").
CREATE INDEX subscribers_attributes_idx ON subscribers USING gin (attributes jsonb_path_ops);

-- +goose Down
DROP INDEX subscribers_attributes_idx;
ALTER TABLE campaigns DROP COLUMN segment_id;
DROP TABLE segments;
