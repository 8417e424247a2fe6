-- The large account of `sendonce-harness largeaccount`: one account seeded in bulk
-- (generate_series, no API round trip per row) so that the dashboard's API calls
-- can be timed against 1,000,000 subscribers, 500 campaigns and 5,000,000 sends.
-- Harness queries: no request can reach them.

-- name: LargeSubscribersInsert :execrows
-- Subscribers number @first to @last: nine in ten confirmed, one in twenty pending,
-- one in twenty unsubscribed; an attribute plan of three values; created over the
-- last year, the last number the newest.
INSERT INTO subscribers (account_id, email, email_lower, name, status, attributes, created_at, updated_at)
SELECT sqlc.arg(account_id)::bigint, 'user' || g || '@example' || (g % 50) || '.com', 'user' || g || '@example' || (g % 50) || '.com',
       'User ' || g,
       CASE WHEN g % 20 = 0 THEN 'unsubscribed' WHEN g % 20 = 1 THEN 'pending' ELSE 'confirmed' END,
       jsonb_build_object('plan', (ARRAY['free', 'pro', 'team'])[1 + g % 3], 'seats', g % 40),
       now() - (sqlc.arg(last)::bigint - g) * 30 * interval '1 second',
       now() - (sqlc.arg(last)::bigint - g) * 30 * interval '1 second'
FROM generate_series(sqlc.arg(first)::bigint, sqlc.arg(last)::bigint) AS g;

-- name: LargeListsInsert :many
INSERT INTO lists (account_id, name)
SELECT sqlc.arg(account_id)::bigint, 'List ' || g FROM generate_series(1, sqlc.arg(n)::int) AS g
RETURNING id;

-- name: LargeListMembersInsert :execrows
-- Each subscriber of the account in one of the lists, round robin by id.
INSERT INTO list_members (list_id, subscriber_id, account_id, status)
SELECT (sqlc.arg(list_ids)::bigint[])[1 + (s.id % cardinality(sqlc.arg(list_ids)::bigint[]))], s.id, s.account_id,
       CASE s.status WHEN 'confirmed' THEN 'subscribed' WHEN 'pending' THEN 'pending' ELSE 'unsubscribed' END
FROM subscribers s
WHERE s.account_id = sqlc.arg(account_id)::bigint;

-- name: LargeCampaignsInsert :many
-- @n sent campaigns, one a day back from today, each to one list.
INSERT INTO campaigns (account_id, name, subject, from_email, text_template, list_ids, status,
                       approved_at, started_at, finished_at, created_at, updated_at)
SELECT sqlc.arg(account_id)::bigint, 'Campaign ' || g, 'News number ' || g, 'news@example.com', 'Hello {{.Name}}',
       ARRAY[(sqlc.arg(list_ids)::bigint[])[1 + g % cardinality(sqlc.arg(list_ids)::bigint[])]], 'sent',
       now() - ((sqlc.arg(n)::int - g) * interval '1 day' + interval '1 hour'), now() - ((sqlc.arg(n)::int - g) * interval '1 day' + interval '1 hour'),
       now() - (sqlc.arg(n)::int - g) * interval '1 day', now() - ((sqlc.arg(n)::int - g) * interval '1 day' + interval '2 hours'),
       now() - (sqlc.arg(n)::int - g) * interval '1 day'
FROM generate_series(1, sqlc.arg(n)::int) AS g
ORDER BY g
RETURNING id;

-- name: LargeSendsInsert :execrows
-- One campaign's sends: @n subscribers from id @first_subscriber_id on, nearly
-- all sent over the campaign's hour, one in fifty failed, one in two hundred a hard
-- bounce and one in a thousand a complaint.
INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, attempts,
                   sent_at, feedback, feedback_at, feedback_source, via_provider, via_idempotent, created_at, updated_at)
SELECT c.id, c.account_id, s.id, s.email, s.email_lower, 'campaign:' || c.id || ':' || s.id,
       CASE WHEN s.id % 50 = 7 THEN 'failed' ELSE 'sent' END, 1,
       CASE WHEN s.id % 50 = 7 THEN NULL ELSE c.started_at + (s.id % 3600) * interval '1 second' END,
       CASE WHEN s.id % 200 = 3 THEN 'hard_bounce' WHEN s.id % 1000 = 9 THEN 'complaint' END,
       CASE WHEN s.id % 200 = 3 OR s.id % 1000 = 9 THEN c.started_at + (3600 + s.id % 3600) * interval '1 second' END,
       CASE WHEN s.id % 200 = 3 OR s.id % 1000 = 9 THEN 'provider' END,
       'http', true, c.started_at, c.finished_at
FROM campaigns c
CROSS JOIN LATERAL (
    SELECT id, email, email_lower FROM subscribers
    WHERE account_id = c.account_id AND id >= sqlc.arg(first_subscriber_id)::bigint
    ORDER BY id LIMIT sqlc.arg(n)::bigint) AS s
WHERE c.account_id = sqlc.arg(account_id)::bigint AND c.id = sqlc.arg(campaign_id)::bigint;

-- name: LargeCampaignCountsInsert :execrows
-- The report counters the executor keeps as it acknowledges, for the seeded sends.
INSERT INTO campaign_counts (campaign_id, account_id, domain, sent, hard_bounces, complaints)
SELECT campaign_id, account_id, split_part(email_lower, '@', 2),
       count(*) FILTER (WHERE status = 'sent'),
       count(*) FILTER (WHERE feedback = 'hard_bounce'),
       count(*) FILTER (WHERE feedback = 'complaint')
FROM sends
WHERE account_id = sqlc.arg(account_id)::bigint AND job_id LIKE 'campaign:%'
GROUP BY campaign_id, account_id, split_part(email_lower, '@', 2);

-- name: LargeSuppressionsInsert :execrows
-- The unsubscribed subscribers, suppressed as an opt-out records them.
INSERT INTO suppressions (account_id, email_lower, reason, source, created_at)
SELECT account_id, email_lower, 'unsubscribe', 'one-click', updated_at
FROM subscribers
WHERE account_id = sqlc.arg(account_id)::bigint AND status = 'unsubscribed';

-- name: LargeMessageStreamInsert :one
-- The account's transactional message stream (the campaign of kind messages).
INSERT INTO campaigns (account_id, kind, name, subject, from_email, status, started_at)
VALUES (sqlc.arg(account_id)::bigint, 'messages', 'Messages', '', 'shop@example.com', 'sending', now())
RETURNING id;

-- name: LargeMessagesInsert :execrows
-- @n transactional messages, each with its send row (sent), one a minute back from now.
WITH m AS (
    INSERT INTO messages (account_id, idempotency_key, request_hash, category, to_email, from_email, subject, text, tags, created_at)
    SELECT sqlc.arg(account_id)::bigint, 'order-' || g, sha256(('order-' || g)::bytea), 'transactional',
           'user' || g || '@example' || (g % 50) || '.com', 'shop@example.com', 'Receipt ' || g, 'Thanks',
           ARRAY['receipt'], now() - (sqlc.arg(n)::int - g) * interval '1 minute'
    FROM generate_series(1, sqlc.arg(n)::int) AS g
    RETURNING id, account_id, idempotency_key, to_email, created_at
)
INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, attempts, sent_at, via_provider, via_idempotent, created_at, updated_at)
SELECT sqlc.arg(stream_id)::bigint, m.account_id, m.id, m.to_email, lower(m.to_email), 'message:' || m.account_id || ':' || m.idempotency_key,
       'sent', 1, m.created_at, 'http', true, m.created_at, m.created_at
FROM m;

-- name: LargeEventsInsert :execrows
-- @n events over the last 30 days: deliveries, and one in ten an opt-out, a bounce
-- or a complaint of a subscriber.
INSERT INTO events (account_id, type, occurred_at, data)
SELECT sqlc.arg(account_id)::bigint,
       CASE g % 30 WHEN 1 THEN 'subscriber.unsubscribed' WHEN 2 THEN 'subscriber.bounced' WHEN 3 THEN 'subscriber.complained' ELSE 'send.sent' END,
       now() - (sqlc.arg(n)::int - g) * (2592000.0 / sqlc.arg(n)::int) * interval '1 second',
       jsonb_build_object('email', 'user' || g || '@example' || (g % 50) || '.com', 'campaign_id', sqlc.arg(campaign_id)::bigint)
FROM generate_series(1, sqlc.arg(n)::int) AS g;

-- name: LargeAnalyze :exec
ANALYZE;

-- name: LargeSubscriberFirst :one
-- The account's lowest subscriber id: the seeded ones are numbered from it.
SELECT coalesce(min(id), 0)::bigint FROM subscribers WHERE account_id = sqlc.arg(account_id)::bigint;
