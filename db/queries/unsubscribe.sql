-- name: UnsubscribeRecipient :one
-- The address and page language for a verified token. The send row keeps the address
-- the message went to, which is the one the recipient asks to stop: the subscriber may
-- have changed address (or been deleted) since. A link without a send row (a test
-- send) falls back to the subscriber's current address.
SELECT coalesce(
           (SELECT d.email FROM sends d
            WHERE d.account_id = @account_id AND d.campaign_id = @campaign_id AND d.subscriber_id = @subscriber_id),
           (SELECT s.email FROM subscribers s WHERE s.account_id = @account_id AND s.id = @subscriber_id),
           ''
       )::text AS email,
       coalesce((SELECT c.language FROM campaigns c WHERE c.account_id = @account_id AND c.id = @campaign_id), '')::text AS language;

-- name: SendRecordUnsubscribe :exec
UPDATE sends SET feedback = 'unsubscribe', feedback_at = now(), updated_at = now()
WHERE account_id = @account_id AND campaign_id = @campaign_id AND subscriber_id = @subscriber_id
  AND feedback IS NULL;
