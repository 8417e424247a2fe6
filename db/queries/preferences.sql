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
-- The preference page's lists: every list the subscriber belongs to (subscribed,
-- unsubscribed or pending) and the account's public lists, with the membership's
-- status ('' when not a member). Private lists the address is not on stay unseen.
SELECT l.id, l.name, coalesce(m.status, '')::text AS status
FROM lists l
LEFT JOIN list_members m ON m.list_id = l.id AND m.account_id = l.account_id AND m.subscriber_id = @subscriber_id
WHERE l.account_id = @account_id AND (l.public OR m.subscriber_id IS NOT NULL)
ORDER BY l.name, l.id;

-- name: MembershipJoinPublic :many
-- The preference page may also join public lists the subscriber is not on yet: the
-- link proves the mailbox, so the membership is subscribed at once.
INSERT INTO list_members (list_id, subscriber_id, account_id, status, status_source, status_at)
SELECT l.id, @subscriber_id, @account_id, 'subscribed', @source, now()
FROM lists l
WHERE l.account_id = @account_id AND l.public AND l.id = ANY(@ids::bigint[])
ORDER BY l.id
ON CONFLICT DO NOTHING
RETURNING list_id;

-- name: MembershipSetPreferences :many
-- The preference page's submit: the lists in @subscribed are subscribed, the
-- subscriber's other memberships unsubscribed. Only existing memberships change: a
-- link cannot join a list the subscriber was never on.
UPDATE list_members
SET status        = CASE WHEN list_id = ANY(@subscribed::bigint[]) THEN 'subscribed' ELSE 'unsubscribed' END,
    status_source = @source,
    status_at     = now()
WHERE account_id = @account_id AND subscriber_id = @subscriber_id
  AND status <> CASE WHEN list_id = ANY(@subscribed::bigint[]) THEN 'subscribed' ELSE 'unsubscribed' END
RETURNING list_id, status;

-- name: SuppressionExists :one
SELECT EXISTS (SELECT 1 FROM suppressions WHERE account_id = @account_id AND email_lower = lower(@email::text));

-- name: SendSuppressLeftLists :execrows
-- A reader who leaves a list mid-send gets no more of that list's mail. In the
-- opt-out's own transaction, every unsettled row (queued or in flight) of the
-- account's running (or paused) campaigns whose lists the subscriber no longer
-- belongs to as subscribed is flagged left_list; a queued one is marked suppressed
-- at once, with its send.suppressed event. A row in flight keeps its status (a
-- message already handed to the provider still goes out), but if it comes back to
-- queued (a release, a temporary failure, a rescue) the claim marks it suppressed
-- (SendClaimBatch). The flag keeps the claim free of a membership check per row
-- (the build already skips left memberships). Campaigns with no lists (every
-- subscriber) and message streams are untouched: the suppression list governs them.
WITH dropped AS (
    UPDATE sends d
    SET status = CASE WHEN d.status = 'queued' THEN 'suppressed' ELSE d.status END,
        left_list = true, updated_at = now()
    FROM campaigns c
    WHERE c.account_id = @account_id
      AND c.kind IN ('campaign', 'sequence')
      AND c.status IN ('sending', 'paused')
      AND cardinality(c.list_ids) > 0
      AND d.campaign_id = c.id
      AND d.subscriber_id = ANY(@subscriber_ids::bigint[])
      AND d.status IN ('queued', 'sending')
      AND NOT EXISTS (
          SELECT 1 FROM list_members m
          WHERE m.account_id = @account_id AND m.subscriber_id = d.subscriber_id
            AND m.list_id = ANY(c.list_ids) AND m.status = 'subscribed')
    RETURNING d.id, d.account_id, d.campaign_id, d.subscriber_id, d.email, d.status
), status_counted AS (
    -- The rows it suppressed, in their campaigns' kept status counts.
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT x.campaign_id, x.account_id, 'suppressed', count(*) FROM dropped x
    WHERE x.status = 'suppressed'
    GROUP BY 1, 2 ORDER BY 1
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
INSERT INTO events (account_id, type, data)
SELECT x.account_id, 'send.suppressed',
       jsonb_build_object('campaign_id', x.campaign_id, 'send_id', x.id, 'subscriber_id', x.subscriber_id,
                          'email', x.email, 'status', 'suppressed', 'reason', 'left_list')
FROM dropped x
WHERE x.status = 'suppressed';
