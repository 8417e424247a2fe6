-- name: ListCreate :one
INSERT INTO lists (account_id, name, description, optin, public, language, optin_from_email, optin_from_name,
                   optin_template_id)
VALUES (@account_id, @name, @description, @optin, @public, @language, @optin_from_email, @optin_from_name,
        sqlc.narg('optin_template_id'))
RETURNING *;

-- name: ListGet :one
SELECT l.*, (SELECT count(*) FROM list_members m WHERE m.list_id = l.id AND m.status = 'subscribed')::bigint AS member_count
FROM lists l
WHERE l.account_id = @account_id AND l.id = @id;

-- name: ListList :many
SELECT l.*, (SELECT count(*) FROM list_members m WHERE m.list_id = l.id AND m.status = 'subscribed')::bigint AS member_count
FROM lists l
WHERE l.account_id = @account_id AND l.id > @after_id
ORDER BY l.id
LIMIT @lim;

-- name: ListUpdate :execrows
UPDATE lists SET
    name        = coalesce(sqlc.narg('name'), name),
    description = coalesce(sqlc.narg('description'), description),
    optin       = coalesce(sqlc.narg('optin'), optin),
    public      = coalesce(sqlc.narg('public'), public),
    language    = coalesce(sqlc.narg('language'), language),
    optin_from_email  = coalesce(sqlc.narg('optin_from_email'), optin_from_email),
    optin_from_name   = coalesce(sqlc.narg('optin_from_name'), optin_from_name),
    -- clear_optin_template drops the template; otherwise a NULL keeps it.
    optin_template_id = CASE WHEN @clear_optin_template::boolean THEN NULL
                             ELSE coalesce(sqlc.narg('optin_template_id'), optin_template_id) END,
    updated_at  = now()
WHERE account_id = @account_id AND id = @id;

-- name: ListDelete :execrows
-- The list row, and by cascade what memberships are left: the few added since
-- ListMembersPurge emptied it (DeleteList).
DELETE FROM lists WHERE account_id = @account_id AND id = @id;

-- name: ListMembersPurge :execrows
-- Deletes up to 1,000 memberships of a list, in the statement's own short
-- transaction: every account's event readers wait below the oldest running
-- transaction, so a list's memberships are not deleted all at once by the cascade
-- of its row. The list's primary key order (list_id, subscriber_id) is the index's.
DELETE FROM list_members
WHERE (list_id, subscriber_id) IN (
    SELECT m.list_id, m.subscriber_id FROM list_members m
    WHERE m.account_id = @account_id AND m.list_id = @list_id
    ORDER BY m.subscriber_id
    LIMIT 1000);

-- name: ListIDsOwned :many
-- Which of ids are the account's lists: a campaign may only target its own.
SELECT id FROM lists WHERE account_id = @account_id AND id = ANY(@ids::bigint[]);

-- name: ListMembersAdd :execrows
-- Only the account's own subscribers can join; the caller has already refused others.
INSERT INTO list_members (list_id, subscriber_id, account_id)
SELECT @list_id, s.id, @account_id
FROM subscribers s
WHERE s.account_id = @account_id AND s.id = ANY(@subscriber_ids::bigint[])
-- id order, so concurrent bulk adds to one list wait for each other, never deadlock.
ORDER BY s.id
ON CONFLICT DO NOTHING;

-- name: ListMembersRemove :execrows
DELETE FROM list_members
WHERE account_id = @account_id AND list_id = @list_id AND subscriber_id = ANY(@subscriber_ids::bigint[]);

-- name: ListMembershipsOfSubscriber :many
-- The lists one subscriber is in and how (subscribed, pending, unsubscribed),
-- through list_members_subscriber_idx; both tables are filtered on the account.
SELECT l.id AS list_id, l.name, m.status, m.created_at, m.status_at
FROM list_members m
JOIN lists l ON l.id = m.list_id AND l.account_id = @account_id
WHERE m.account_id = @account_id AND m.subscriber_id = @subscriber_id
ORDER BY lower(l.name), l.id;
