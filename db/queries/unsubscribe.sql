-- name: UnsubscribeRecipient :one
-- What a send token (and every version 1 token) names: the kind of the campaign
-- it names, the address and the page language. The send row keeps the address
-- the message went to, which is the one the recipient asks to stop: the subscriber
-- may have changed address (or been deleted) since. A link without a send row (a
-- test send) falls back to the subscriber's current address, but only for a
-- campaign: in a message stream's row the subscriber slot holds a message id
-- (version 1 tokens of marketing messages), which must never be read as a
-- subscriber's; with the message deleted, such a token names nobody.
WITH c AS (
    SELECT kind, language FROM campaigns WHERE account_id = @account_id AND id = @campaign_id
)
SELECT coalesce((SELECT c.kind FROM c), 'campaign')::text AS kind,
       coalesce(
           (SELECT d.email FROM sends d
            WHERE d.account_id = @account_id AND d.campaign_id = @campaign_id AND d.subscriber_id = @subscriber_id),
           (SELECT s.email FROM subscribers s
            WHERE s.account_id = @account_id AND s.id = @subscriber_id
              AND NOT EXISTS (SELECT 1 FROM c WHERE c.kind = 'messages')),
           ''
       )::text AS email,
       coalesce((SELECT c.language FROM c), '')::text AS language;

-- name: SendRecordUnsubscribe :exec
-- Notes an opt-out on the send it came through, with its source ('one_click' or
-- 'preferences'), unless the send has feedback already (a bounce or complaint, or
-- an earlier opt-out). The report counters change in the same statement: the
-- campaign's per domain, the account's per day.
WITH changed AS (
    UPDATE sends s SET feedback = 'unsubscribe', feedback_source = @source::text, feedback_at = now(), updated_at = now()
    WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.subscriber_id = @subscriber_id
      AND s.feedback IS NULL
    RETURNING s.account_id, s.campaign_id, substring(s.email_lower FROM '[^@]*$') AS domain
), by_campaign AS (
    INSERT INTO campaign_counts (campaign_id, account_id, domain, unsub_one_click, unsub_preferences)
    SELECT c.campaign_id, c.account_id, c.domain,
           count(*) FILTER (WHERE @source::text = 'one_click'), count(*) FILTER (WHERE @source::text = 'preferences')
    FROM changed c GROUP BY 1, 2, 3
    ON CONFLICT (campaign_id, domain) DO UPDATE SET
        unsub_one_click   = campaign_counts.unsub_one_click + excluded.unsub_one_click,
        unsub_preferences = campaign_counts.unsub_preferences + excluded.unsub_preferences
)
INSERT INTO account_day_counts (account_id, day, kind, unsubscribes)
SELECT c.account_id, (now() AT TIME ZONE 'UTC')::date, k.kind, count(*)
FROM changed c JOIN campaigns k ON k.id = c.campaign_id
GROUP BY 1, 2, 3
ON CONFLICT (account_id, day, kind) DO UPDATE SET unsubscribes = account_day_counts.unsubscribes + excluded.unsubscribes;
