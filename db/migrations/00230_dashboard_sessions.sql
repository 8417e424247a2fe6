-- +goose Up
-- The dashboard signs in with a one-time login link (printed by `sendonce dev` and
-- `sendonce account login`) or an API key, and gets a session: a random token in an
-- HttpOnly cookie, so no key is kept in the browser. Only hashes are stored.
CREATE TABLE login_links (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    token_hash bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX login_links_expires_idx ON login_links (expires_at);

-- A session made with an API key names it, so revoking the key ends the session too.
CREATE TABLE dashboard_sessions (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    api_key_id bigint      REFERENCES api_keys (id) ON DELETE CASCADE,
    token_hash bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_expires_idx ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_sessions_account_idx ON dashboard_sessions (account_id);

-- +goose Down
DROP TABLE dashboard_sessions;
DROP TABLE login_links;
