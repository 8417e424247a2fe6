-- People of accounts: users, memberships, invitations, one-time tokens, second
-- factors (internal/user). Every statement an account's member or key triggers
-- filters on account_id; a user's own routes filter on user_id.

-- name: UserUpsert :one
-- The first invitation accepted (or `account create --owner-email`) makes the user;
-- a later one finds it. The no-op update makes RETURNING answer either way.
INSERT INTO users (email, email_lower) VALUES (@email, @email_lower)
ON CONFLICT (email_lower) DO UPDATE SET email_lower = excluded.email_lower
RETURNING id, email, (xmax = 0)::boolean AS inserted;

-- name: UserByEmail :one
SELECT id, email, password_hash, (totp_confirmed_at IS NOT NULL)::boolean AS has_totp FROM users WHERE email_lower = @email_lower;

-- name: UserGet :one
SELECT id, email, password_hash, totp_key_id, totp_sealed, totp_confirmed_at, totp_last_step FROM users WHERE id = @id;

-- name: UserSetPassword :exec
UPDATE users SET password_hash = @password_hash WHERE id = @id;

-- name: UserTOTPStart :execrows
-- A new secret replaces an unconfirmed one; a confirmed second factor is never
-- replaced here (it is removed first, with a code).
UPDATE users SET totp_key_id = @key_id, totp_sealed = @sealed, totp_last_step = NULL
WHERE id = @id AND totp_confirmed_at IS NULL;

-- name: UserTOTPConfirm :execrows
UPDATE users SET totp_confirmed_at = coalesce(sqlc.narg('now')::timestamptz, now()), totp_last_step = @step
WHERE id = @id AND totp_confirmed_at IS NULL AND totp_sealed IS NOT NULL;

-- name: UserTOTPUseStep :execrows
-- Compare-and-set on the last accepted step: a code of a step already used (or an
-- earlier one) matches no row, so a replay within its 30 seconds is refused even
-- when two requests race.
UPDATE users SET totp_last_step = @step
WHERE id = @id AND totp_confirmed_at IS NOT NULL AND (totp_last_step IS NULL OR totp_last_step < @step);

-- name: UserTOTPRemove :exec
UPDATE users SET totp_key_id = NULL, totp_sealed = NULL, totp_confirmed_at = NULL, totp_last_step = NULL
WHERE id = @id;

-- name: RecoveryCodesReplace :exec
WITH gone AS (DELETE FROM recovery_codes WHERE recovery_codes.user_id = @user_id)
INSERT INTO recovery_codes (user_id, code_hash) SELECT @user_id, unnest(@hashes::bytea[]);

-- name: RecoveryCodeUse :execrows
-- Single use in one statement: the first caller marks it; a second matches no row.
UPDATE recovery_codes SET used_at = now()
WHERE user_id = @user_id AND code_hash = @code_hash AND used_at IS NULL;

-- name: RecoveryCodesLeft :one
SELECT count(*) FROM recovery_codes WHERE user_id = @user_id AND used_at IS NULL;

-- name: MembershipCreate :one
-- Accepting a second invitation to the same account keeps the first role.
INSERT INTO memberships (account_id, user_id, role) VALUES (@account_id, @user_id, @role)
ON CONFLICT (account_id, user_id) DO UPDATE SET role = memberships.role
RETURNING role;

-- name: MembershipGet :one
SELECT m.role, u.email FROM memberships m JOIN users u ON u.id = m.user_id
WHERE m.account_id = @account_id AND m.user_id = @user_id;

-- name: MembershipList :many
SELECT m.user_id, u.email, m.role, m.created_at, (u.totp_confirmed_at IS NOT NULL)::boolean AS two_factor
FROM memberships m JOIN users u ON u.id = m.user_id
WHERE m.account_id = @account_id
ORDER BY m.created_at, m.user_id;

-- name: MembershipSetRole :one
UPDATE memberships SET role = @role
WHERE account_id = @account_id AND user_id = @user_id
RETURNING role;

-- name: MembershipDelete :execrows
DELETE FROM memberships WHERE account_id = @account_id AND user_id = @user_id;

-- name: MembershipOwners :one
-- Counted under the rows' locks, so two owners removing each other cannot both
-- succeed and leave the account with none.
SELECT count(*) FROM (SELECT 1 FROM memberships WHERE account_id = @account_id AND role = 'owner' FOR UPDATE) o;

-- name: UserAccounts :many
SELECT a.id, a.name, m.role FROM memberships m JOIN accounts a ON a.id = m.account_id
WHERE m.user_id = @user_id AND a.deleted_at IS NULL ORDER BY m.created_at, a.id;

-- name: InvitationCreate :one
INSERT INTO invitations (account_id, email, email_lower, role, token_hash, expires_at)
VALUES (@account_id, @email, @email_lower, @role, @token_hash, @expires_at)
RETURNING id, created_at;

-- name: InvitationListPending :many
SELECT id, email, role, created_at, expires_at FROM invitations
WHERE account_id = @account_id AND accepted_at IS NULL
  AND expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
ORDER BY id;

-- name: InvitationDelete :execrows
DELETE FROM invitations WHERE account_id = @account_id AND id = @id AND accepted_at IS NULL;

-- name: InvitationAccept :one
-- Single use in one statement: the first caller marks it accepted and gets it; a
-- second (or a late one) matches no row.
UPDATE invitations SET accepted_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE token_hash = @token_hash AND accepted_at IS NULL
  AND expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
RETURNING id, account_id, email, email_lower, role;

-- name: UserTokenCreate :exec
INSERT INTO user_tokens (user_id, purpose, account_id, token_hash, expires_at)
VALUES (@user_id, @purpose, sqlc.narg('account_id'), @token_hash, @expires_at);

-- name: UserTokenUse :one
-- Single use in one statement, as login links.
UPDATE user_tokens SET used_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE token_hash = @token_hash AND purpose = @purpose AND used_at IS NULL
  AND expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
RETURNING user_id, account_id;

-- name: UserTokenPeek :one
-- The second-factor step is spent only by a right code: a wrong one leaves it
-- usable (the failure limits bound the guesses), so it is read, not used, first.
SELECT user_id, account_id FROM user_tokens
WHERE token_hash = @token_hash AND purpose = @purpose AND used_at IS NULL
  AND expires_at > coalesce(sqlc.narg('now')::timestamptz, now());

-- name: UserTokenPurge :execrows
DELETE FROM user_tokens WHERE id IN (
    SELECT t.id FROM user_tokens t WHERE t.expires_at < sqlc.arg('before')::timestamptz LIMIT 1000);

-- name: UserSessionCreate :one
INSERT INTO dashboard_sessions (account_id, user_id, token_hash, expires_at)
VALUES (@account_id, @user_id, @token_hash, @expires_at)
RETURNING id;

-- name: UserSessionList :many
SELECT s.id, s.account_id, a.name AS account_name, s.created_at, s.expires_at, s.token_hash
FROM dashboard_sessions s JOIN accounts a ON a.id = s.account_id
WHERE s.user_id = @user_id AND s.expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
ORDER BY s.id DESC;

-- name: UserSessionDelete :many
-- Ends sessions of a user, with the notification (on commit) that ends the event
-- streams their stream tokens opened (postgres.AuthorityChannel), as signing out
-- does. Only the user's own: another user's session id matches nothing. With
-- keep_token_hash set, the session of that token stays (the one in use).
WITH gone AS (
    DELETE FROM dashboard_sessions
    WHERE user_id = @user_id
      AND (sqlc.narg('id')::bigint IS NULL OR id = sqlc.narg('id')::bigint)
      AND (sqlc.narg('account_id')::bigint IS NULL OR account_id = sqlc.narg('account_id')::bigint)
      AND (sqlc.narg('keep_token_hash')::bytea IS NULL OR token_hash <> sqlc.narg('keep_token_hash')::bytea)
    RETURNING id
)
SELECT gone.id, pg_notify(@channel::text, 'session:' || gone.id)::text AS notified FROM gone;

-- name: AccountTwoFactorGet :one
SELECT require_two_factor FROM accounts WHERE id = @id;

-- name: AccountTwoFactorSet :one
UPDATE accounts SET require_two_factor = @require_two_factor WHERE id = @id RETURNING require_two_factor;
