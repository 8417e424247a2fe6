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

-- name: SubscriberImportUpsert :one
-- One batch of an import, bound as arrays (one element per row, in step), in one
-- statement. An existing address (same lower-case key) keeps its id; it takes the
-- row's address spelling and the row's attributes merged over its own, and the
-- row's name and status when the batch gives them (name_given, status_given: a
-- batch holds only rows that agree on both; the arrays then carry the defaults a
-- new subscriber gets, "" and pending). An unsubscribed subscriber stays
-- unsubscribed: an import must not undo an opt-out. Address order: concurrent
-- imports that share addresses lock the shared rows in the same order and wait
-- for each other instead of deadlocking. (xmax = 0) tells an insert from an
-- update. With list_id, every imported subscriber also joins that list.
WITH r AS (
    SELECT unnest(@emails::text[]) AS email, unnest(@email_lowers::text[]) AS email_lower,
           unnest(@names::text[]) AS name, unnest(@statuses::text[]) AS status,
           unnest(@attributes::jsonb[]) AS attributes
), up AS (
    INSERT INTO subscribers AS s (account_id, email, email_lower, name, attributes, status)
    SELECT @account_id, r.email, r.email_lower, r.name, r.attributes, r.status
    FROM r
    ORDER BY r.email_lower
    ON CONFLICT (account_id, email_lower) DO UPDATE SET
        email      = excluded.email,
        name       = CASE WHEN @name_given::bool THEN excluded.name ELSE s.name END,
        attributes = s.attributes || excluded.attributes,
        status     = CASE WHEN s.status = 'unsubscribed' OR NOT @status_given::bool THEN s.status
                          ELSE excluded.status END,
        updated_at = now()
    RETURNING s.id, (xmax = 0) AS inserted
), joined AS (
    INSERT INTO list_members (list_id, subscriber_id, account_id)
    SELECT sqlc.narg('list_id')::bigint, up.id, @account_id FROM up
    WHERE sqlc.narg('list_id')::bigint IS NOT NULL
    ON CONFLICT DO NOTHING
)
SELECT count(*) FILTER (WHERE inserted)::bigint AS inserted,
       count(*) FILTER (WHERE NOT inserted)::bigint AS updated
FROM up;

-- name: SubscriberFindByEmails :many
-- A campaign test send renders with the data of the account's subscriber at each
-- address, when there is one.
SELECT email_lower, name, attributes FROM subscribers
WHERE account_id = @account_id AND email_lower = ANY(@emails::text[]);
