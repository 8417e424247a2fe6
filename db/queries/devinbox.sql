-- name: DevInboxCampaigns :many
-- Which of these campaigns are the account's: the dev inbox shows an account only
-- the messages of its own campaigns.
SELECT id FROM campaigns WHERE account_id = @account_id AND id = ANY(@ids::bigint[]);
