-- The recipient's side of list memberships: what a signed unsubscribe link may read
-- and change. Every statement is scoped to the token's account and subscriber.

-- name: AccountUnsubscribeScope :one
SELECT unsubscribe_scope FROM accounts WHERE id = @account_id;

-- name: AccountSetUnsubscribeScope :one
UPDATE accounts SET unsubscribe_scope = @unsubscribe_scope WHERE id = @account_id
RETURNING *;

-- name: CampaignListIDsForUnsubscribe :one
SELECT list_ids FROM campaigns WHERE account_id = @account_id AND id = @campaign_id;

-- name: MembershipUnsubscribeLists :execrows
-- One-click with list scope: the subscriber leaves the campaign's lists. The rows
-- stay, marked, so the next build skips them and an import cannot re-add them.
UPDATE list_members
SET status = 'unsubscribed', status_source = @source, status_at = now()
WHERE account_id = @account_id AND subscriber_id = @subscriber_id
  AND list_id = ANY(@list_ids::bigint[]) AND status = 'subscribed';

-- name: MembershipPreferences :many
-- The lists the subscriber belongs to (subscribed or not), for the preference page.
SELECT l.id, l.name, m.status
FROM list_members m
JOIN lists l ON l.id = m.list_id AND l.account_id = m.account_id
WHERE m.account_id = @account_id AND m.subscriber_id = @subscriber_id
ORDER BY l.name, l.id;

-- name: MembershipSetPreferences :execrows
-- The preference page's submit: the lists in @subscribed are subscribed, the
-- subscriber's other memberships unsubscribed. Only existing memberships change: a
-- link cannot join a list the subscriber was never on.
UPDATE list_members
SET status        = CASE WHEN list_id = ANY(@subscribed::bigint[]) THEN 'subscribed' ELSE 'unsubscribed' END,
    status_source = @source,
    status_at     = now()
WHERE account_id = @account_id AND subscriber_id = @subscriber_id
  AND status <> CASE WHEN list_id = ANY(@subscribed::bigint[]) THEN 'subscribed' ELSE 'unsubscribed' END;

-- name: SuppressionExists :one
SELECT EXISTS (SELECT 1 FROM suppressions WHERE account_id = @account_id AND email_lower = lower(@email::text));
