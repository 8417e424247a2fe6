-- name: SubscriberCreate :one
INSERT INTO subscribers (account_id, email, email_lower, name, attributes, status)
VALUES (@account_id, @email, @email_lower, @name, @attributes, @status)
RETURNING *;

-- name: SubscriberGet :one
SELECT * FROM subscribers WHERE account_id = @account_id AND id = @id;

-- name: SubscriberList :many
-- Keyset page in id order. The email filter is a prefix of the lower-case address
-- (LIKE wildcards escaped by the caller), which the text_pattern_ops index can serve.
-- With list_id, only memberships in one of membership_statuses count: members who
-- unsubscribed from the list (or have not confirmed it) are not its members.
SELECT s.* FROM subscribers s
WHERE s.account_id = @account_id
  AND s.id > @after_id
  AND (sqlc.narg('status')::text IS NULL OR s.status = sqlc.narg('status')::text)
  AND (sqlc.narg('email_prefix')::text IS NULL OR s.email_lower LIKE sqlc.narg('email_prefix')::text || '%')
  AND (sqlc.narg('list_id')::bigint IS NULL OR EXISTS (
        SELECT 1 FROM list_members m
        WHERE m.account_id = @account_id AND m.list_id = sqlc.narg('list_id')::bigint AND m.subscriber_id = s.id
          AND m.status = ANY(@membership_statuses::text[])))
ORDER BY s.id
LIMIT @lim;

-- name: SubscriberCountBounded :one
-- How many subscribers SubscriberList's filters select, counted up to @bound rows
-- and no further: a page shows an exact total for an account of any ordinary size,
-- and the cost of asking stays that of reading @bound index entries however large
-- the account grows (the caller says "more than" when the count reaches the bound).
SELECT count(*)::bigint FROM (
    SELECT 1 FROM subscribers s
    WHERE s.account_id = @account_id
      AND (sqlc.narg('status')::text IS NULL OR s.status = sqlc.narg('status')::text)
      AND (sqlc.narg('email_prefix')::text IS NULL OR s.email_lower LIKE sqlc.narg('email_prefix')::text || '%')
      AND (sqlc.narg('list_id')::bigint IS NULL OR EXISTS (
            SELECT 1 FROM list_members m
            WHERE m.account_id = @account_id AND m.list_id = sqlc.narg('list_id')::bigint AND m.subscriber_id = s.id
              AND m.status = ANY(@membership_statuses::text[])))
    LIMIT @bound
) c;

-- name: SubscriberUpdate :one
-- A NULL argument keeps the column; attributes are replaced as a whole.
UPDATE subscribers SET
    email       = coalesce(sqlc.narg('email'), email),
    email_lower = coalesce(sqlc.narg('email_lower'), email_lower),
    name        = coalesce(sqlc.narg('name'), name),
    attributes  = coalesce(sqlc.narg('attributes'), attributes),
    status      = coalesce(sqlc.narg('status'), status),
    updated_at  = now()
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: SubscriberDelete :execrows
DELETE FROM subscribers WHERE account_id = @account_id AND id = @id;

-- name: SubscriberConfirm :one
-- pending → confirmed; confirming a confirmed subscriber changes nothing. Zero rows
-- means the subscriber is missing or unsubscribed, which the caller tells apart.
UPDATE subscribers
SET status = 'confirmed',
    updated_at = CASE WHEN status = 'pending' THEN now() ELSE updated_at END
WHERE account_id = @account_id AND id = @id AND status IN ('pending', 'confirmed')
RETURNING *;

-- name: SubscriberStatusGet :one
SELECT status FROM subscribers WHERE account_id = @account_id AND id = @id;

-- name: SubscriberIDsOwned :many
-- Which of ids are the account's subscribers: bulk membership refuses the others.
SELECT id FROM subscribers WHERE account_id = @account_id AND id = ANY(@ids::bigint[]);

-- name: SubscriberImportInsert :many
-- One batch of an import, its first statement: the batch's addresses that no
-- subscriber of the account has are inserted and returned; the others are left to
-- SubscriberImportUpdate. The batch comes as arrays, one element per row, in
-- step. Address order: concurrent imports that share a new address wait for each
-- other in the same order instead of deadlocking. With list_id, the new
-- subscribers also join that list.
WITH r AS (
    SELECT unnest(@emails::text[]) AS email, unnest(@email_lowers::text[]) AS email_lower,
           unnest(@names::text[]) AS name, unnest(@statuses::text[]) AS status,
           unnest(@attributes::jsonb[]) AS attributes
), ins AS (
    INSERT INTO subscribers (account_id, email, email_lower, name, attributes, status)
    SELECT @account_id, r.email, r.email_lower, r.name, r.attributes, r.status
    FROM r
    ORDER BY r.email_lower
    ON CONFLICT (account_id, email_lower) DO NOTHING
    RETURNING id, email_lower
), joined AS (
    INSERT INTO list_members (list_id, subscriber_id, account_id)
    SELECT sqlc.narg('list_id')::bigint, ins.id, @account_id FROM ins
    WHERE sqlc.narg('list_id')::bigint IS NOT NULL
    ON CONFLICT DO NOTHING
)
SELECT ins.email_lower FROM ins;

-- name: SubscriberImportUpdate :many
-- One batch of an import, its second statement (a statement of its own, so it sees
-- the subscribers another transaction committed while the first waited): the
-- existing subscribers of the batch's addresses, locked in address order (as the
-- first statement inserts), keep their id and take the row's address spelling,
-- its name and status where name_given and status_given say the row gave them,
-- and its attributes merged over their own. An unsubscribed subscriber stays
-- unsubscribed: an import must not undo an opt-out. Returns the addresses updated:
-- one deleted since the first statement is in neither answer, and goes round again.
WITH r AS (
    SELECT unnest(@emails::text[]) AS email, unnest(@email_lowers::text[]) AS email_lower,
           unnest(@names::text[]) AS name, unnest(@name_given::bool[]) AS name_given,
           unnest(@statuses::text[]) AS status, unnest(@status_given::bool[]) AS status_given,
           unnest(@attributes::jsonb[]) AS attributes
), locked AS (
    SELECT s.id, r.email, r.name, r.name_given, r.status, r.status_given, r.attributes
    FROM subscribers s
    JOIN r ON s.email_lower = r.email_lower
    WHERE s.account_id = @account_id
    ORDER BY s.email_lower
    FOR UPDATE OF s
), up AS (
    UPDATE subscribers s SET
        email      = l.email,
        name       = CASE WHEN l.name_given THEN l.name ELSE s.name END,
        attributes = s.attributes || l.attributes,
        status     = CASE WHEN s.status = 'unsubscribed' OR NOT l.status_given THEN s.status ELSE l.status END,
        updated_at = now()
    FROM locked l
    WHERE s.id = l.id
    RETURNING s.id, s.email_lower
), joined AS (
    INSERT INTO list_members (list_id, subscriber_id, account_id)
    SELECT sqlc.narg('list_id')::bigint, up.id, @account_id FROM up
    WHERE sqlc.narg('list_id')::bigint IS NOT NULL
    ON CONFLICT DO NOTHING
)
SELECT up.email_lower FROM up;

-- name: SubscriberFindByEmails :many
-- A campaign test send renders with the data of the account's subscriber at each
-- address, when there is one.
SELECT email_lower, name, attributes FROM subscribers
WHERE account_id = @account_id AND email_lower = ANY(@emails::text[]);
