-- Public sign-up and double opt-in. Nothing here is reached with an API key: the
-- account comes from its public_id (sign-up) or from a signed token (confirm), and
-- every statement is scoped to that account.

-- name: AccountByPublicID :one
SELECT id, public_id FROM accounts WHERE public_id = @public_id;

-- name: OptinListsForSignup :many
-- The public lists of the account among ids, locked against a concurrent change of
-- their opt-in settings for the length of the sign-up. A private or another
-- account's list is simply absent, so the caller cannot tell it from a missing one.
SELECT id, name, optin, language, optin_from_email, optin_from_name, optin_template_id
FROM lists
WHERE account_id = @account_id AND public AND id = ANY(@ids::bigint[])
ORDER BY id
FOR SHARE;

-- name: OptinSubscriberUpsert :one
-- The form's subscriber: created pending (signup, so the purge may remove it if
-- it never confirms), or the existing one of that address, untouched: a public form
-- never changes a known subscriber's name or status. The no-op update locks the row
-- so concurrent sign-ups of one address take turns. (xmax = 0) tells an insert.
INSERT INTO subscribers AS s (account_id, email, email_lower, name, status, signup)
VALUES (@account_id, @email, @email_lower, @name, 'pending', true)
ON CONFLICT (account_id, email_lower) DO UPDATE SET email_lower = s.email_lower
RETURNING s.id, s.email, s.name, s.status, (xmax = 0) AS inserted;

-- name: OptinMembershipJoin :many
-- Joins the subscriber to the lists: subscribed at once where direct (single
-- opt-in), pending otherwise. An existing membership is left alone unless the
-- address had unsubscribed from that list: then it becomes pending, whatever the
-- list's opt-in, because only the address itself may undo its opt-out. Returns the
-- memberships that changed.
INSERT INTO list_members AS m (list_id, subscriber_id, account_id, status, status_source, status_at)
SELECT l.id, @subscriber_id, @account_id,
       CASE WHEN l.id = ANY(@direct::bigint[]) THEN 'subscribed' ELSE 'pending' END, @source, now()
FROM lists l
WHERE l.account_id = @account_id AND l.id = ANY(@list_ids::bigint[])
ORDER BY l.id
ON CONFLICT (list_id, subscriber_id) DO UPDATE
    SET status = 'pending', status_source = excluded.status_source, status_at = excluded.status_at
    WHERE m.status = 'unsubscribed'
RETURNING m.list_id, m.status;

-- name: OptinPendingLists :many
-- The subscriber's memberships waiting for confirmation, with their lists' names
-- and languages.
SELECT l.id, l.name, l.language
FROM list_members m
JOIN lists l ON l.id = m.list_id AND l.account_id = m.account_id
WHERE m.account_id = @account_id AND m.subscriber_id = @subscriber_id AND m.status = 'pending'
ORDER BY l.id;

-- name: OptinMarkSent :one
-- The one-confirmation-per-hour guard, as a compare-and-set: only the sign-up that
-- moves optin_sent_at forward sends, so concurrent or repeated sign-ups on any
-- replica make at most one confirmation per address per interval.
UPDATE subscribers
SET optin_sent_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE account_id = @account_id AND id = @id
  AND (optin_sent_at IS NULL
       OR optin_sent_at <= coalesce(sqlc.narg('now')::timestamptz, now()) - make_interval(secs => @every_seconds::float8))
RETURNING optin_sent_at;

-- name: OptinConfirmSubscriber :one
-- Confirming never downgrades: a confirmed subscriber stays so; a pending or
-- unsubscribed one (who has just proved the address and asked again) is confirmed.
-- was_pending tells whether the status changed.
UPDATE subscribers s
SET status = 'confirmed', updated_at = CASE WHEN s.status <> 'confirmed' THEN now() ELSE s.updated_at END
FROM (SELECT o.id, o.status FROM subscribers o WHERE o.account_id = @account_id AND o.id = @id FOR UPDATE) old
WHERE s.id = old.id
RETURNING s.id, s.email, old.status AS old_status;

-- name: OptinConfirmMemberships :many
-- Every pending membership of the subscriber becomes subscribed.
UPDATE list_members
SET status = 'subscribed', status_source = @source, status_at = now()
WHERE account_id = @account_id AND subscriber_id = @subscriber_id AND status = 'pending'
RETURNING list_id;

-- name: OptinSubscriberDirect :exec
-- A single opt-in sign-up confirms at once a pending subscriber that a sign-up
-- created (signup), never one the tenant holds as pending (imported or created
-- through the API): an anonymous form proves nothing about the address, and
-- "every subscriber" campaigns send to confirmed subscribers.
UPDATE subscribers SET status = 'confirmed', updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'pending' AND signup;

-- name: OptinPurgeSubscribers :execrows
-- Sign-ups that never confirmed, oldest first, a batch at a time; SKIP LOCKED lets
-- every replica run the purge without waiting on another's batch. Memberships go
-- with them (ON DELETE CASCADE); their sends, if any, stay as history.
DELETE FROM subscribers
WHERE id IN (
    SELECT p.id FROM subscribers p
    WHERE p.status = 'pending' AND p.signup AND p.created_at < @before::timestamptz
    ORDER BY p.created_at
    LIMIT @n
    FOR UPDATE SKIP LOCKED);

-- name: OptinPurgeMemberships :execrows
-- Pending memberships of subscribers who stay (confirmed through another list, or
-- the tenant's own) and never confirmed this one.
DELETE FROM list_members
WHERE (list_id, subscriber_id) IN (
    SELECT p.list_id, p.subscriber_id FROM list_members p
    WHERE p.status = 'pending' AND p.status_at < @before::timestamptz
    ORDER BY p.status_at
    LIMIT @n
    FOR UPDATE SKIP LOCKED);

-- name: OptinSubscriberLanguage :one
-- The language of the list the subscriber joined last, for a page with no pending
-- list to take it from.
SELECT coalesce((SELECT l.language FROM list_members m
                 JOIN lists l ON l.id = m.list_id AND l.account_id = m.account_id
                 WHERE m.account_id = @account_id AND m.subscriber_id = @subscriber_id
                 ORDER BY m.status_at DESC, l.id LIMIT 1), '')::text AS language;
