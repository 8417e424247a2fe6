-- The shared test factory's rows (internal/testfactory): the shapes tests build by
-- hand where the product has no query that writes them as they are (a subscriber in
-- any status, a campaign in any state, a send already settled). Only tests use them.

-- name: FactorySubscriber :one
-- created_at null: now.
INSERT INTO subscribers (account_id, email, email_lower, name, attributes, status, signup, created_at)
VALUES (@account_id, @email::text, lower(@email::text), @name, @attributes, @status, @signup,
        coalesce(sqlc.narg('created_at')::timestamptz, now()))
RETURNING id;

-- name: FactoryCampaign :one
INSERT INTO campaigns (account_id, name, subject, from_email, html_template, text_template, status, list_ids,
                       archive, sender_id, scheduled_for, approved_at, started_at, language, ambiguous_policy,
                       segment_id, deliver_at_local, ab_mode, ab_variants)
VALUES (@account_id, @name, @subject, @from_email, @html_template, @text_template, @status, @list_ids::bigint[],
        @archive, sqlc.narg('sender_id'), sqlc.narg('scheduled_for'), sqlc.narg('approved_at'), sqlc.narg('started_at'),
        @language, @ambiguous_policy, sqlc.narg('segment_id'), sqlc.narg('deliver_at_local'), sqlc.narg('ab_mode'),
        sqlc.narg('ab_variants'))
RETURNING id;

-- name: FactoryVariant :exec
-- A variant of an A/B campaign; a null field is the campaign's own.
INSERT INTO campaign_variants (account_id, campaign_id, idx, subject, html_template)
VALUES (@account_id, @campaign_id, @idx, sqlc.narg('subject'), sqlc.narg('html_template'));

-- name: FactorySend :one
-- The job id is the executor's, campaign:<campaign>:<subscriber>, unless one is
-- given; next_attempt_at null is the table's -infinity (due at once).
INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, attempts, sent_at,
                   lease_until, provider_message_id, next_attempt_at)
VALUES (@campaign_id, @account_id, @subscriber_id, @email::text, lower(@email::text),
        coalesce(sqlc.narg('job_id')::text, 'campaign:' || @campaign_id::bigint || ':' || @subscriber_id::bigint),
        @status, @attempts, sqlc.narg('sent_at'), sqlc.narg('lease_until'), sqlc.narg('provider_message_id'),
        coalesce(sqlc.narg('next_attempt_at')::timestamptz, '-infinity'))
RETURNING id;

-- name: FactoryTrackedLink :exec
INSERT INTO tracked_links (account_id, campaign_id, idx, url) VALUES (@account_id, @campaign_id, @idx, @url);

-- name: FactorySubscribers :one
-- Subscribers first … last in one statement, the i-th <prefix><i><suffix>@<domain>
-- named name (followed by i if number_name), in statuses[(i-1) % len] with
-- attributes[(i-1) % len] (plus {number_key: i} unless number_key is empty), signed up
-- through a form if signup, created at created_at (null: now). It returns how many
-- it made and the first one's id (0: none).
WITH ins AS (
    INSERT INTO subscribers (account_id, email, email_lower, name, status, attributes, signup, created_at)
    SELECT @account_id::bigint, e.email, lower(e.email),
           @name::text || CASE WHEN @number_name::bool THEN i::text ELSE '' END,
           (@statuses::text[])[1 + (i - 1) % cardinality(@statuses::text[])],
           (@attributes::jsonb[])[1 + (i - 1) % cardinality(@attributes::jsonb[])]
               || CASE WHEN @number_key::text = '' THEN '{}'::jsonb ELSE jsonb_build_object(@number_key::text, i) END,
           @signup::bool, coalesce(sqlc.narg('created_at')::timestamptz, now())
    FROM generate_series(@first::int, @last::int) i,
         LATERAL (SELECT @prefix::text || i || @suffix::text || '@' || @domain::text AS email) e
    ORDER BY i
    RETURNING id)
SELECT count(*) AS n, coalesce(min(id), 0)::bigint AS first_id FROM ins;

-- name: FactorySends :one
-- A send of the campaign to each subscriber of the account whose address starts with
-- prefix (empty: all of them) and whose status is subscriber_status (empty: any), after
-- the subscriber id after, the first n by id (null: all), with the executor's job
-- ids, in one statement. The k-th (from 1, by subscriber id) is in status
-- statuses[(k-1) % len] and of variant variants[(k-1) % len] (none: no variant),
-- sent at sent_at if sent, leased until lease_until if sending. It returns how many
-- it made and the last subscriber's id (0: none).
WITH ins AS (
    INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, status, sent_at, lease_until,
                       variant)
    SELECT @campaign_id::bigint, s.account_id, s.id, s.email, s.email_lower,
           'campaign:' || @campaign_id::bigint || ':' || s.id, st.status,
           CASE WHEN st.status = 'sent' THEN sqlc.narg('sent_at')::timestamptz END,
           CASE WHEN st.status = 'sending' THEN sqlc.narg('lease_until')::timestamptz END,
           (@variants::smallint[])[1 + (s.k - 1) % nullif(cardinality(@variants::smallint[]), 0)]
    FROM (SELECT s.id, s.account_id, s.email, s.email_lower, row_number() OVER (ORDER BY s.id) AS k
          FROM subscribers s
          WHERE s.account_id = @account_id::bigint AND s.email_lower LIKE lower(@prefix::text) || '%'
            AND (@subscriber_status::text = '' OR s.status = @subscriber_status::text) AND s.id > @after::bigint
          ORDER BY s.id
          LIMIT sqlc.narg('n')::bigint) s,
         LATERAL (SELECT (@statuses::text[])[1 + (s.k - 1) % cardinality(@statuses::text[])] AS status) st
    ORDER BY s.id
    RETURNING subscriber_id)
SELECT count(*) AS n, coalesce(max(subscriber_id), 0)::bigint AS last_subscriber FROM ins;

-- name: FactorySuppression :exec
-- The row alone: no suppression.created event, unlike the product's suppression add.
INSERT INTO suppressions (account_id, email_lower, reason, source)
VALUES (@account_id, lower(@email::text), @reason, @source);

-- name: FactoryTrackingHit :exec
-- A hit on a campaign send as the tracker records it, with no user agent and no bot reasons.
INSERT INTO tracking_hits (account_id, campaign_id, send_id, kind, link_idx, occurred_at, method, suspected_bot)
VALUES (@account_id, @campaign_id, @send_id, @kind, @link_idx, @occurred_at, 'GET', @suspected_bot);

-- name: FactorySender :one
-- A sender with no settings and no secret: enough to route and count by, not to deliver through.
INSERT INTO senders (account_id, name, type, is_default) VALUES (@account_id, @name, @type, @is_default)
RETURNING id;

-- name: FactoryTemplate :one
-- A template with the table's defaults besides its name, subject and bodies.
INSERT INTO templates (account_id, name, subject, html, text) VALUES (@account_id, @name, @subject, @html, @text)
RETURNING id;

-- name: FactoryMembersByPrefix :execrows
-- Every subscriber of the account whose address starts with the prefix ('': all of
-- them), or only the one subscriber_id (0: any), joins the list in the status,
-- since status_at (null: now), in one statement; one already on it stays as it is.
INSERT INTO list_members (list_id, subscriber_id, account_id, status, status_at)
SELECT @list_id::bigint, s.id, s.account_id, @status::text, coalesce(sqlc.narg('status_at')::timestamptz, now())
FROM subscribers s
WHERE s.account_id = @account_id::bigint AND s.email_lower LIKE lower(@prefix::text) || '%'
  AND (@subscriber_id::bigint = 0 OR s.id = @subscriber_id::bigint)
ORDER BY s.id
ON CONFLICT DO NOTHING;

-- name: FactoryEnrollEveryone :execrows
-- Every subscriber of the account enrolled in the sequence by hand (trigger manual),
-- at its first step, due at due_at, in one statement.
INSERT INTO sequence_enrollments (account_id, sequence_id, subscriber_id, email, due_at, trigger)
SELECT s.account_id, @sequence_id::bigint, s.id, s.email, @due_at::timestamptz, 'manual'
FROM subscribers s
WHERE s.account_id = @account_id::bigint;

-- name: FactoryEvents :execrows
-- n events of the account of the type in one statement, the i-th's data data plus
-- {number_key: i} (unless number_key is empty).
INSERT INTO events (account_id, type, data)
SELECT @account_id::bigint, @type::text,
       @data::jsonb || CASE WHEN @number_key::text = '' THEN '{}'::jsonb ELSE jsonb_build_object(@number_key::text, i) END
FROM generate_series(1, @n::int) i;

-- name: FactorySuppressions :execrows
-- n suppressions of the account in one statement, <prefix>1@example.com to
-- <prefix>n@example.com, for the reason, with no source and no events.
INSERT INTO suppressions (account_id, email_lower, reason)
SELECT @account_id::bigint, lower(@prefix::text) || i || '@example.com', @reason::text
FROM generate_series(1, @n::int) i;
