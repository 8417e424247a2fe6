-- name: WebhookEndpointCreate :one
INSERT INTO webhook_endpoints (account_id, source, name, secret, settings)
VALUES (@account_id, @source, @name, @secret, @settings)
RETURNING *;

-- name: WebhookEndpointList :many
-- Keyset pagination in id order.
SELECT * FROM webhook_endpoints
WHERE account_id = @account_id AND id > @after_id
ORDER BY id
LIMIT @max_rows;

-- name: WebhookEndpointGet :one
SELECT * FROM webhook_endpoints WHERE account_id = @account_id AND id = @id;

-- name: WebhookEndpointGetForDelivery :one
-- The one look-up without a tenant: a provider's POST names only the endpoint, and
-- the endpoint decides the account. Source must match the URL too, so an endpoint
-- id cannot be replayed under another scheme.
SELECT * FROM webhook_endpoints WHERE id = @id AND source = @source;

-- name: WebhookEndpointRotate :one
-- Compare-and-set on the secret the caller read: a concurrent rotation makes this
-- return no row instead of losing the secret it replaced. The replaced secret is
-- kept by WebhookPreviousSecretKeep in the same transaction.
UPDATE webhook_endpoints
SET secret = @secret, previous_expires_at = @previous_expires_at, updated_at = now()
WHERE account_id = @account_id AND id = @id AND secret = @current_secret
RETURNING *;

-- name: WebhookPreviousSecretKeep :exec
-- Keeps a rotated-out secret until its own expiry, dropping the endpoint's expired ones.
WITH expired AS (
    DELETE FROM webhook_previous_secrets
    WHERE account_id = @account_id AND endpoint_id = @endpoint_id
      AND expires_at <= coalesce(sqlc.narg('now')::timestamptz, now())
)
INSERT INTO webhook_previous_secrets (account_id, endpoint_id, secret, expires_at)
VALUES (@account_id, @endpoint_id, @secret, @expires_at);

-- name: WebhookPreviousSecretsValid :many
-- The rotated-out secrets that still verify, newest first. Bounded so a tenant
-- rotating in a loop cannot make one delivery try any number of secrets.
SELECT secret FROM webhook_previous_secrets
WHERE account_id = @account_id AND endpoint_id = @endpoint_id AND expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
ORDER BY expires_at DESC
LIMIT 20;

-- name: WebhookEndpointDelete :execrows
DELETE FROM webhook_endpoints WHERE account_id = @account_id AND id = @id;

-- name: WebhookEndpointSetSubscribeURL :exec
UPDATE webhook_endpoints SET subscribe_url = @subscribe_url, updated_at = now()
WHERE account_id = @account_id AND id = @id;

-- name: WebhookEventInsert :execrows
-- Zero rows means the event was applied before: the caller changes nothing more.
INSERT INTO webhook_events (account_id, source, event_id, type, email_lower, payload)
VALUES (@account_id, @source, @event_id, @type, @email_lower, @payload)
ON CONFLICT (account_id, source, event_id) DO NOTHING;

-- name: SoftBouncePrune :exec
-- Deletes the soft bounces of an address that fell out of the window, so the table
-- holds no more than a window's worth per address.
DELETE FROM soft_bounces
WHERE account_id = @account_id AND email_lower = @email_lower
  AND occurred_at <= coalesce(sqlc.narg('now')::timestamptz, now()) - make_interval(secs => @window_seconds::float8);

-- name: SoftBounceAddAndCount :one
-- Records one soft bounce of the message @message_key (a repeat of a message already
-- recorded changes nothing) and counts the distinct messages of the address within
-- the window, this one included: the statement's snapshot does not see its own
-- insert, so this message is the 1 + and excluded from the count(*). Run
-- SoftBouncePrune first.
WITH ins AS (
    INSERT INTO soft_bounces (account_id, email_lower, message_key, occurred_at)
    VALUES (@account_id, @email_lower, @message_key, coalesce(sqlc.narg('now')::timestamptz, now()))
    ON CONFLICT (account_id, email_lower, message_key) DO NOTHING
    RETURNING occurred_at
)
SELECT (1 + count(*))::bigint AS n
FROM soft_bounces b
WHERE b.account_id = @account_id AND b.email_lower = @email_lower AND b.message_key <> @message_key
  AND b.occurred_at > coalesce(sqlc.narg('now')::timestamptz, now()) - make_interval(secs => @window_seconds::float8);

-- name: SendRecordFeedback :one
-- Records a bounce or complaint on the send it belongs to, found by the job id we
-- gave the provider or the message id it gave us. A worse feedback is not replaced
-- by a milder one (a later soft bounce does not hide a complaint).
-- A campaign's job id is 'campaign:<campaign_id>:<subscriber_id>' (sends_job_id_form)
-- and is found through that unique key; any other job id through sends_job_id_key,
-- which holds only those (migration 00160). A job id that only looks like a
-- campaign's matches nothing in either branch.
-- The report counters change in the same statement: the send's campaign counts the
-- recipient under its new feedback and no longer under the soft bounce it replaces
-- (read locked, so two deliveries for one send count it once), and the day counts
-- the event. The source is 'provider': a webhook speaks for the provider.
WITH found AS (
    SELECT s.id, s.feedback AS before FROM sends s
    WHERE s.account_id = @account_id
      AND ((s.job_id = sqlc.narg('job_id') AND s.job_id NOT LIKE 'campaign:%')
           OR (s.campaign_id = (CASE WHEN sqlc.narg('job_id')::text ~ '^campaign:[0-9]{1,18}:[0-9]{1,18}$'
                                     THEN split_part(sqlc.narg('job_id')::text, ':', 2)::bigint END)
               AND s.subscriber_id = (CASE WHEN sqlc.narg('job_id')::text ~ '^campaign:[0-9]{1,18}:[0-9]{1,18}$'
                                           THEN split_part(sqlc.narg('job_id')::text, ':', 3)::bigint END)
               AND s.job_id = sqlc.narg('job_id'))
           OR s.provider_message_id = sqlc.narg('provider_message_id'))
      AND (s.feedback IS NULL OR s.feedback = 'soft_bounce')
    FOR UPDATE
), changed AS (
    UPDATE sends s
    SET feedback = @feedback, feedback_source = 'provider',
        feedback_at = coalesce(sqlc.narg('now')::timestamptz, now()), updated_at = now()
    FROM found f
    WHERE s.id = f.id
    RETURNING s.account_id, s.campaign_id, substring(s.email_lower FROM '[^@]*$') AS domain, s.feedback, f.before
), by_campaign AS (
    INSERT INTO campaign_counts (campaign_id, account_id, domain, hard_bounces, soft_bounces, complaints, unsub_provider)
    SELECT c.campaign_id, c.account_id, c.domain,
           count(*) FILTER (WHERE c.feedback = 'hard_bounce'),
           count(*) FILTER (WHERE c.feedback = 'soft_bounce') - count(*) FILTER (WHERE c.before = 'soft_bounce'),
           count(*) FILTER (WHERE c.feedback = 'complaint'),
           count(*) FILTER (WHERE c.feedback = 'unsubscribe')
    FROM changed c
    GROUP BY 1, 2, 3 ORDER BY 1, 3
    ON CONFLICT (campaign_id, domain) DO UPDATE SET
        hard_bounces   = campaign_counts.hard_bounces + excluded.hard_bounces,
        soft_bounces   = campaign_counts.soft_bounces + excluded.soft_bounces,
        complaints     = campaign_counts.complaints + excluded.complaints,
        unsub_provider = campaign_counts.unsub_provider + excluded.unsub_provider
), by_day AS (
    INSERT INTO account_day_counts (account_id, day, kind, hard_bounces, soft_bounces, complaints, unsubscribes)
    SELECT c.account_id, (coalesce(sqlc.narg('now')::timestamptz, now()) AT TIME ZONE 'UTC')::date, k.kind,
           count(*) FILTER (WHERE c.feedback = 'hard_bounce'),
           count(*) FILTER (WHERE c.feedback = 'soft_bounce'),
           count(*) FILTER (WHERE c.feedback = 'complaint'),
           count(*) FILTER (WHERE c.feedback = 'unsubscribe')
    FROM changed c JOIN campaigns k ON k.id = c.campaign_id
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (account_id, day, kind) DO UPDATE SET
        hard_bounces = account_day_counts.hard_bounces + excluded.hard_bounces,
        soft_bounces = account_day_counts.soft_bounces + excluded.soft_bounces,
        complaints   = account_day_counts.complaints + excluded.complaints,
        unsubscribes = account_day_counts.unsubscribes + excluded.unsubscribes
)
SELECT count(*) FROM changed;
