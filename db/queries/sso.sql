-- name: SSOGet :one
SELECT account_id, issuer_url, client_id, secret_key_id, secret_sealed, allowed_domains, default_role, enabled,
       created_at, updated_at
FROM account_sso WHERE account_id = @account_id;

-- name: SSOUpsert :one
-- The secret is kept when none is given (a change of domains or role does not
-- ask for it again); the first save must carry one (the service checks).
INSERT INTO account_sso (account_id, issuer_url, client_id, secret_key_id, secret_sealed, allowed_domains,
                         default_role, enabled)
VALUES (@account_id, @issuer_url, @client_id, coalesce(sqlc.narg('secret_key_id')::text, ''),
        coalesce(sqlc.narg('secret_sealed')::bytea, ''::bytea), @allowed_domains, @default_role, @enabled)
ON CONFLICT (account_id) DO UPDATE SET
    issuer_url      = excluded.issuer_url,
    client_id       = excluded.client_id,
    secret_key_id   = coalesce(sqlc.narg('secret_key_id')::text, account_sso.secret_key_id),
    secret_sealed   = coalesce(sqlc.narg('secret_sealed')::bytea, account_sso.secret_sealed),
    allowed_domains = excluded.allowed_domains,
    default_role    = excluded.default_role,
    enabled         = excluded.enabled,
    updated_at      = now()
RETURNING account_id, issuer_url, client_id, allowed_domains, default_role, enabled, created_at, updated_at;

-- name: SSODelete :execrows
DELETE FROM account_sso WHERE account_id = @account_id;

-- name: SSOByDomain :many
-- The one look-up over every account: the public sign-in page has an address
-- and no account yet. It answers only the accounts' public ids.
SELECT s.account_id, a.public_id
FROM account_sso s JOIN accounts a ON a.id = s.account_id
WHERE s.enabled AND @domain::text = ANY (s.allowed_domains)
ORDER BY s.account_id
LIMIT 20;

-- name: SSOFlowCreate :exec
INSERT INTO sso_flows (account_id, state_hash, key_id, sealed, expires_at)
VALUES (@account_id, @state_hash, @key_id, @sealed, @expires_at);

-- name: SSOFlowUse :one
-- A flow is used once, before it expires: the compare-and-set on used_at is what
-- refuses a replayed callback.
UPDATE sso_flows SET used_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE state_hash = @state_hash AND used_at IS NULL
  AND expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
RETURNING account_id, key_id, sealed;

-- name: SSOFlowPurge :execrows
DELETE FROM sso_flows WHERE expires_at < @before;

-- name: SSOMembershipEnsure :one
-- A person the account's provider signs in is a member: one who is not yet gets
-- the default role, one who is keeps theirs.
INSERT INTO memberships (account_id, user_id, role) VALUES (@account_id, @user_id, @role)
ON CONFLICT (account_id, user_id) DO UPDATE SET role = memberships.role
RETURNING role, (xmax = 0)::boolean AS inserted;

-- name: SSOSessionCreate :one
INSERT INTO dashboard_sessions (account_id, user_id, token_hash, expires_at, via_sso)
VALUES (@account_id, @user_id, @token_hash, @expires_at, true)
RETURNING id;
