-- name: DevInboxCampaigns :many
-- Which of these campaigns are the account's: the dev inbox shows an account only
-- the messages of its own campaigns.
SELECT id FROM campaigns WHERE account_id = @account_id AND id = ANY(@ids::bigint[]);

-- name: DevInboxSequences :many
-- Which of these sequences are the account's: a sequence step's message is the
-- account's when its sequence is.
SELECT id FROM sequences WHERE account_id = @account_id AND id = ANY(@ids::bigint[]);
