-- Queries of `sendonce-harness chaos` only: a fixture campaign and the harness's view of it.

-- name: ChaosAccountCreate :one
INSERT INTO accounts (name) VALUES (@name) RETURNING id;

-- name: ChaosSubscribersCreate :execrows
-- n confirmed subscribers r<i>@example.com.
INSERT INTO subscribers (account_id, email, email_lower, name, status)
SELECT @account_id, 'r' || i || '@example.com', 'r' || i || '@example.com', 'R ' || i, 'confirmed'
FROM generate_series(1, @n::int) i;

-- name: ChaosSubscribersSpread :exec
-- Moves the account's subscribers to the given domains in turn (by id), before
-- a campaign is built (`sendonce-harness chaos -pacing`).
UPDATE subscribers
SET email = split_part(email, '@', 1) || '@' || (@domains::text[])[1 + id % cardinality(@domains::text[])],
    email_lower = split_part(email_lower, '@', 1) || '@' || (@domains::text[])[1 + id % cardinality(@domains::text[])]
WHERE account_id = @account_id;

-- name: ChaosCampaignCreate :one
-- An approved campaign to every confirmed subscriber of the account, due now.
INSERT INTO campaigns (account_id, name, subject, from_email, html_template, text_template,
                       status, scheduled_for, approved_at)
VALUES (@account_id, 'chaos', 'Hello {{.Name}}', 'news@example.com', '<p>Hi {{.Name}}</p>', 'Hi {{.Name}}',
        'approved', now(), now())
RETURNING id;

-- name: ChaosCampaignStatus :one
SELECT status FROM campaigns WHERE id = @id;

-- name: ChaosCampaignAccount :one
SELECT account_id FROM campaigns WHERE id = @id;

-- name: ChaosSendStatuses :many
-- Every send row of the campaign, for matching the events receiver's view.
SELECT id, status FROM sends WHERE campaign_id = @campaign_id;

-- name: ChaosCampaignSetSender :exec
UPDATE campaigns SET sender_id = @sender_id WHERE account_id = @account_id AND id = @id;

-- name: ChaosMessageStream :one
-- The account's default transactional message stream (`sendonce-harness chaos -messages`).
SELECT id FROM campaigns WHERE account_id = @account_id AND kind = 'messages' AND sender_id IS NULL AND status = 'sending';

-- name: ChaosExecutorsRegistered :one
-- How many of the given processes have registered as executors: a process that
-- has is past its start (its signal handling is in place). A killed process of
-- an earlier generation may have had the same pid: its row is older than since.
SELECT count(DISTINCT pid) FROM executors WHERE pid = ANY(@pids::int[]) AND started_at >= @since::timestamptz;

-- name: ChaosCampaignSetPool :exec
UPDATE campaigns SET pool_id = @pool_id, sender_id = NULL WHERE account_id = @account_id AND id = @id;

-- name: ChaosRoutes :many
-- The campaign's rows by the sender recorded on them and status (`chaos -pool`).
SELECT coalesce(via_sender_id, 0)::bigint AS sender_id, status, count(*) AS n
FROM sends WHERE campaign_id = @campaign_id
GROUP BY 1, 2 ORDER BY 1, 2;

-- name: ChaosFailedErrors :many
-- Why the campaign's failed rows failed, by last error (`chaos -pool` prints them).
SELECT coalesce(last_error, '')::text AS last_error, count(*) AS n
FROM sends WHERE campaign_id = @campaign_id AND status = 'failed'
GROUP BY 1 ORDER BY 2 DESC LIMIT 5;

-- name: ChaosSubscribersSetZones :exec
-- Gives the account's subscribers the given attributes.timezone values in turn
-- (by id); an empty string leaves the attribute out (`sendonce-harness chaos
-- -localtime`).
UPDATE subscribers
SET attributes = CASE WHEN (@zones::text[])[1 + id % cardinality(@zones::text[])] = '' THEN attributes - 'timezone'
                      ELSE attributes || jsonb_build_object('timezone', (@zones::text[])[1 + id % cardinality(@zones::text[])]) END
WHERE account_id = @account_id;

-- name: ChaosLocalRows :many
-- Every send row of the campaign with its recipient's attributes.timezone (''
-- when absent) and its due time (`sendonce-harness chaos -localtime`).
SELECT s.job_id, s.status, s.next_attempt_at, coalesce(sub.attributes->>'timezone', '')::text AS zone
FROM sends s
JOIN subscribers sub ON sub.id = s.subscriber_id AND sub.account_id = s.account_id
WHERE s.campaign_id = @campaign_id
ORDER BY s.id;
