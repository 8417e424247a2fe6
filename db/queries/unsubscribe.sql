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
UPDATE sends SET feedback = 'unsubscribe', feedback_at = now(), updated_at = now()
WHERE account_id = @account_id AND campaign_id = @campaign_id AND subscriber_id = @subscriber_id
  AND feedback IS NULL;
