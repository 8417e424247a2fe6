-- The complaint-rate guard (migration 00281). Not tenant queries unless they take
-- an account: the guard's passes run for every account.

-- name: ComplaintRoutesSince :many
-- The (account, route) pairs with a complaint recorded after since
-- (sends_complaint_idx): only they can have crossed the threshold.
SELECT DISTINCT s.account_id, coalesce(s.via_sender_id, 0)::bigint AS sender_key
FROM sends s
WHERE s.feedback = 'complaint' AND s.feedback_at > @since::timestamptz;

-- name: ComplaintRate :one
-- Deliveries and complaints of one account's route since since: the sends that
-- went through it (sends.via_sender_id, NULL for the environment's provider),
-- delivered (status sent) in the window, and those of them complained about in
-- the window. Only campaigns (and message streams) live in the window are read,
-- each through sends_campaign_status_idx's 'sent' rows.
SELECT count(*) FILTER (WHERE s.sent_at > @since::timestamptz)::bigint AS delivered,
       count(*) FILTER (WHERE s.feedback = 'complaint' AND s.feedback_at > @since::timestamptz)::bigint AS complaints
FROM campaigns c
JOIN sends s ON s.campaign_id = c.id AND s.status = 'sent'
WHERE c.account_id = @account_id
  AND coalesce(c.finished_at, c.cancelled_at, 'infinity'::timestamptz) > @since::timestamptz
  AND coalesce(s.via_sender_id, 0) = @sender_key::bigint;

-- name: ComplaintGuardTrip :one
-- Records a route above the threshold; inserted is true the first time (the
-- caller writes the event once).
INSERT INTO complaint_guards (account_id, sender_key, delivered, complaints, rate, reason, tripped_at)
VALUES (@account_id, @sender_key, @delivered, @complaints, @rate, @reason, coalesce(sqlc.narg('now')::timestamptz, now()))
ON CONFLICT (account_id, sender_key) DO UPDATE
SET delivered = excluded.delivered, complaints = excluded.complaints, rate = excluded.rate
RETURNING (xmax = 0) AS inserted, reason;

-- name: ComplaintGuardClear :execrows
-- The route is back under the threshold.
DELETE FROM complaint_guards WHERE account_id = @account_id AND sender_key = @sender_key;

-- name: ComplaintGuardPauseCampaigns :many
-- Pauses every sending campaign whose route has a guard: the campaign names the
-- sender, or names none and the sender is the account's default (sender_key 0:
-- no default sender, the environment's provider). A CAS on 'sending', so a
-- campaign paused, resumed or finished meanwhile is left alone. A campaign on a
-- sender pool is not paused: its route passes over the guarded sender (PoolRoute).
UPDATE campaigns c
SET status = 'paused', paused_reason = g.reason, updated_at = now()
FROM complaint_guards g
WHERE c.account_id = g.account_id AND c.kind = 'campaign' AND c.status = 'sending' AND c.pool_id IS NULL
  AND g.sender_key = coalesce(c.sender_id,
                              (SELECT d.id FROM senders d WHERE d.account_id = c.account_id AND d.is_default),
                              0)
RETURNING c.id, c.account_id, c.name, g.reason;

-- name: ComplaintGuardClearForCampaign :exec
-- Resuming a campaign by hand clears the guard of its route: the operator decided.
DELETE FROM complaint_guards g
USING campaigns c
WHERE c.account_id = @account_id AND c.id = @campaign_id AND g.account_id = c.account_id
  AND g.sender_key = coalesce(c.sender_id,
                              (SELECT d.id FROM senders d WHERE d.account_id = c.account_id AND d.is_default),
                              0);

-- name: ComplaintGuardList :many
SELECT account_id, sender_key, delivered, complaints, rate, reason, tripped_at
FROM complaint_guards WHERE account_id = @account_id ORDER BY sender_key;

-- name: ComplaintGuardAll :many
-- Every tripped route: each pass judges them again, so one whose rate fell back
-- under the threshold (more deliveries, old complaints leaving the window) clears.
SELECT account_id, sender_key FROM complaint_guards ORDER BY account_id, sender_key;
