-- +goose Up
-- Public sign-up and double opt-in. An account is named on public routes by a
-- random public_id, never by its sequential id, so a form cannot be pointed at
-- every tenant in turn.
ALTER TABLE accounts
    ADD COLUMN public_id text NOT NULL DEFAULT 'pub_' || replace(gen_random_uuid()::text, '-', '');
ALTER TABLE accounts ADD CONSTRAINT accounts_public_id_key UNIQUE (public_id);

-- A list says whether the public form may sign up to it (public) and whether a
-- sign-up needs the address to confirm by email first (optin double). The
-- confirmation email comes from optin_from_email, in the list's language, with the
-- list's own template when optin_template_id is set.
ALTER TABLE lists
    ADD COLUMN optin             text    NOT NULL DEFAULT 'single' CHECK (optin IN ('single', 'double')),
    ADD COLUMN public            boolean NOT NULL DEFAULT false,
    ADD COLUMN language          text    NOT NULL DEFAULT '' CHECK (length(language) <= 35),
    ADD COLUMN optin_from_email  text    NOT NULL DEFAULT '',
    ADD COLUMN optin_from_name   text    NOT NULL DEFAULT '',
    ADD COLUMN optin_template_id bigint  REFERENCES templates (id) ON DELETE SET NULL;

-- A membership waiting for its address to confirm is pending: the recipient build
-- counts subscribed memberships only, so it gets no campaign of that list.
ALTER TABLE list_members DROP CONSTRAINT list_members_status_check;
ALTER TABLE list_members ADD CONSTRAINT list_members_status_check
    CHECK (status IN ('subscribed', 'unsubscribed', 'pending'));

-- signup marks a subscriber the public form created: only those are purged when
-- they stay pending (a tenant's own pending subscribers are never deleted).
-- optin_sent_at is when the last confirmation was sent: the one-per-hour guard is a
-- compare-and-set on it, so it holds across replicas.
ALTER TABLE subscribers
    ADD COLUMN signup        boolean NOT NULL DEFAULT false,
    ADD COLUMN optin_sent_at timestamptz;

-- The purge's scans: pending sign-ups and pending memberships by age.
CREATE INDEX subscribers_signup_pending_idx ON subscribers (created_at) WHERE status = 'pending' AND signup;
CREATE INDEX list_members_pending_idx ON list_members (status_at) WHERE status = 'pending';

-- +goose Down
DROP INDEX list_members_pending_idx;
DROP INDEX subscribers_signup_pending_idx;
ALTER TABLE subscribers DROP COLUMN optin_sent_at, DROP COLUMN signup;
DELETE FROM list_members WHERE status = 'pending';
ALTER TABLE list_members DROP CONSTRAINT list_members_status_check;
ALTER TABLE list_members ADD CONSTRAINT list_members_status_check CHECK (status IN ('subscribed', 'unsubscribed'));
ALTER TABLE lists DROP COLUMN optin_template_id, DROP COLUMN optin_from_name, DROP COLUMN optin_from_email,
    DROP COLUMN language, DROP COLUMN public, DROP COLUMN optin;
ALTER TABLE accounts DROP CONSTRAINT accounts_public_id_key, DROP COLUMN public_id;
