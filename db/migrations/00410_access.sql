-- +goose Up
-- Roles and scoped keys. A key's role is one of the five roles of a team, or one
-- of the two names keys had before roles existed: 'full' keeps the permissions of
-- admin and 'read_only' those of viewer (internal/access maps them), so every
-- existing key does exactly what it did and reads back as it did. A key may
-- instead carry an explicit permission list (role 'custom'), and a list
-- restriction: the list ids it may act on (NULL: every list).
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check
    CHECK (role IN ('owner', 'admin', 'editor', 'approver', 'viewer', 'full', 'read_only', 'custom'));
ALTER TABLE api_keys ADD COLUMN permissions text[];
ALTER TABLE api_keys ADD COLUMN list_ids bigint[];
ALTER TABLE api_keys ADD CONSTRAINT api_keys_custom_check CHECK ((role = 'custom') = (permissions IS NOT NULL));

-- Four eyes: when on, a campaign's approval must come from another actor than the
-- one who created it.
ALTER TABLE accounts ADD COLUMN four_eyes boolean NOT NULL DEFAULT false;

-- Who made a campaign (an API key, a person, or a dashboard session from a login link;
-- NULL for campaigns made before this was recorded, and for the system's own streams).
ALTER TABLE campaigns ADD COLUMN created_by_type text CHECK (created_by_type IN ('user', 'key', 'session'));
ALTER TABLE campaigns ADD COLUMN created_by_id bigint;

-- The audit log: one row per committed write of the tenant API, written in the
-- transaction of the change (internal/audit), so a change that rolls back leaves
-- no entry. Never written or changed through the API; retention deletes old rows
-- (SENDONCE_AUDIT_RETENTION). The actor is a person ('user'), an API key ('key'),
-- or a dashboard session signed in with a login link ('session'). actor_label is what the actor was called then (a
-- person's address, a key's name): the actor may be gone since. detail holds no
-- secret. in_change_tx is false for the few writes that do not run in a
-- transaction of their own, whose entry is written right after they succeed.
CREATE TABLE audit_log (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id   bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    actor_type   text        NOT NULL CHECK (actor_type IN ('user', 'key', 'session')),
    actor_id     bigint      NOT NULL,
    actor_label  text        NOT NULL,
    action       text        NOT NULL,
    target_type  text        NOT NULL,
    target_id    text,
    request_id   text        NOT NULL,
    source_addr  text        NOT NULL,
    detail       jsonb,
    in_change_tx boolean     NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_account_idx ON audit_log (account_id, id);
CREATE INDEX audit_log_target_idx ON audit_log (account_id, target_type, target_id, id);
CREATE INDEX audit_log_created_idx ON audit_log (created_at);

-- +goose Down
DROP TABLE audit_log;
ALTER TABLE campaigns DROP COLUMN created_by_id;
ALTER TABLE campaigns DROP COLUMN created_by_type;
ALTER TABLE accounts DROP COLUMN four_eyes;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_custom_check;
ALTER TABLE api_keys DROP COLUMN list_ids;
ALTER TABLE api_keys DROP COLUMN permissions;
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('full', 'read_only'));
