-- +goose Up
-- People: a user is one person (one address over every account), signed in by
-- password or by a one-time email link, with an optional TOTP second factor. A
-- membership gives a user a role in one account; an invitation asks an address to
-- become a member. Only hashes of tokens, codes and passwords are stored, and the
-- TOTP secret is sealed with the credentials key ring (SENDONCE_SECRETS_KEY).
CREATE TABLE users (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email             text        NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
    email_lower       text        NOT NULL UNIQUE CHECK (email_lower = lower(email)),
    -- An argon2id string in PHC form; NULL: the user signs in by email link only.
    password_hash     text,
    -- The TOTP secret, sealed (key id + AES-GCM), bound to the user's id.
    totp_key_id       text,
    totp_sealed       bytea,
    -- Enrolment is confirmed by a first code; until then the secret does nothing.
    totp_confirmed_at timestamptz,
    -- The last 30-second step a code was accepted for: a code of that step or an
    -- earlier one is refused, so an overheard code cannot be replayed.
    totp_last_step    bigint,
    created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text        NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'approver', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE invitations (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email       text        NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
    email_lower text        NOT NULL CHECK (email_lower = lower(email)),
    role        text        NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'approver', 'viewer')),
    token_hash  bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    accepted_at timestamptz
);
CREATE INDEX invitations_account_idx ON invitations (account_id, id);

-- One-time tokens mailed to a user: an email sign-in link, a password reset, or
-- the short-lived step between a first factor and the TOTP code.
CREATE TABLE user_tokens (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose    text        NOT NULL CHECK (purpose IN ('signin', 'reset', 'second_factor')),
    -- The account the resulting session is for (NULL: the user's first).
    account_id bigint      REFERENCES accounts (id) ON DELETE CASCADE,
    token_hash bytea       NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX user_tokens_expires_idx ON user_tokens (expires_at);
CREATE INDEX user_tokens_user_idx ON user_tokens (user_id);

CREATE TABLE recovery_codes (
    user_id   bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash bytea       NOT NULL CHECK (length(code_hash) = 32),
    used_at   timestamptz,
    PRIMARY KEY (user_id, code_hash)
);

-- A session a user signed in names the user: it lasts only while the user is a
-- member of its account (removal deletes it, the membership check refuses it).
ALTER TABLE dashboard_sessions ADD COLUMN user_id bigint REFERENCES users (id) ON DELETE CASCADE;
CREATE INDEX dashboard_sessions_user_idx ON dashboard_sessions (user_id) WHERE user_id IS NOT NULL;

-- An account may require every member to have a second factor.
ALTER TABLE accounts ADD COLUMN require_two_factor boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE accounts DROP COLUMN require_two_factor;
DROP INDEX dashboard_sessions_user_idx;
ALTER TABLE dashboard_sessions DROP COLUMN user_id;
DROP TABLE recovery_codes;
DROP TABLE user_tokens;
DROP TABLE invitations;
DROP TABLE memberships;
DROP TABLE users;
