-- Click and open tracking, and the web archive (internal/tracking, docs/engagement.md).

-- name: CampaignSetArchive :one
-- Publishes a campaign in the web archive or withdraws it, in any status: the
-- archive shows what went out, so this switch (and only this one) stays open
-- after approval. Message streams are not campaigns.
UPDATE campaigns SET archive = @archive, updated_at = now()
WHERE account_id = @account_id AND id = @id AND kind = 'campaign'
RETURNING *;

-- name: CampaignSetEngagement :one
-- Sets a draft's tracking and archive switches; NULL keeps a switch.
UPDATE campaigns SET
    track_clicks = coalesce(sqlc.narg('track_clicks'), track_clicks),
    track_opens  = coalesce(sqlc.narg('track_opens'), track_opens),
    archive      = coalesce(sqlc.narg('archive'), archive),
    updated_at   = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft' AND kind = 'campaign'
RETURNING *;

-- name: TrackedLinksDelete :exec
-- Drops a campaign's stored links before they are stored again at approval (an
-- approved campaign that went back to draft may have new templates). Nothing was
-- sent yet, so no token names them.
DELETE FROM tracked_links WHERE account_id = @account_id AND campaign_id = @campaign_id;

-- name: TrackedLinksInsert :exec
-- Stores a campaign's tracked URLs once, numbered from 1 in the order given.
INSERT INTO tracked_links (account_id, campaign_id, idx, url)
SELECT @account_id, @campaign_id, u.ord, u.url
FROM unnest(@urls::text[]) WITH ORDINALITY AS u(url, ord);

-- name: TrackedLinksGet :many
-- A campaign's tracked URLs, read by the redirect once per campaign and cached.
SELECT idx, url FROM tracked_links
WHERE account_id = @account_id AND campaign_id = @campaign_id
ORDER BY idx;

-- name: TrackingHitsInsert :execrows
-- The flusher's one statement per batch: every hit is recorded, its bot reasons
-- completed with "delivery" when it came within @delivery_window_seconds of its send's
-- sent_at (a gateway fetching on arrival; a send past retention is not checked),
-- and a send.clicked or send.opened event is written for it in the same statement,
-- so hits and events commit together (the outbox). Hits of another account's send
-- or campaign cannot arrive: their tokens are signed naming all three ids. The
-- reasons arrive comma-joined ('' for none). A message's hit (message_id not 0)
-- names its stream as campaign_id and its send row; its click's URL is the
-- message's stored link, and its event names the message instead of the
-- stream, send and subscriber slots (which hold the message id).
-- The report counters change in the same statement: hits per campaign, recipient
-- domain and link, and the recipients engaging for the first time, found by
-- inserting their keys into engagement_firsts (a key already there inserts nothing,
-- so a recipient counts once whichever flush or replica sees it first). Honeypot
-- clicks are not clicks. Counter rows are written in key order (no deadlock between
-- two replicas' flushes).
WITH hit AS (
    SELECT unnest(@account_ids::bigint[]) AS account_id, unnest(@campaign_ids::bigint[]) AS campaign_id,
           unnest(@send_ids::bigint[]) AS send_id, unnest(@kinds::text[]) AS kind,
           unnest(@link_idxs::int[]) AS link_idx, unnest(@occurred_ats::timestamptz[]) AS occurred_at,
           unnest(@methods::text[]) AS method, unnest(@user_agents::text[]) AS user_agent,
           unnest(@reasons::text[]) AS reasons, nullif(unnest(@message_ids::bigint[]), 0) AS message_id
), classified AS (
    SELECT h.account_id, h.campaign_id, h.send_id, h.kind, h.link_idx, h.occurred_at, h.method, h.user_agent,
           h.message_id, s.subscriber_id, s.email, coalesce(l.url, ml.url) AS url,
           coalesce(substring(s.email_lower FROM '[^@]*$'), '') AS domain,
           array_remove(string_to_array(h.reasons, ',') ||
                        CASE WHEN s.sent_at IS NOT NULL AND h.occurred_at < s.sent_at + make_interval(secs => @delivery_window_seconds::float8)
                             THEN 'delivery' END, NULL) AS bot_reasons
    FROM hit h
    LEFT JOIN sends s ON s.id = h.send_id AND s.account_id = h.account_id AND s.campaign_id = h.campaign_id
    LEFT JOIN tracked_links l ON h.kind = 'click' AND h.message_id IS NULL AND l.campaign_id = h.campaign_id
                              AND l.idx = h.link_idx
    LEFT JOIN message_links ml ON h.kind = 'click' AND ml.message_id = h.message_id AND ml.idx = h.link_idx
    WHERE EXISTS (SELECT 1 FROM campaigns c WHERE c.id = h.campaign_id AND c.account_id = h.account_id)
      AND (h.message_id IS NULL
           OR EXISTS (SELECT 1 FROM messages m WHERE m.id = h.message_id AND m.account_id = h.account_id))
), inserted AS (
    INSERT INTO tracking_hits (account_id, campaign_id, send_id, kind, link_idx, occurred_at, method, user_agent,
                               suspected_bot, bot_reasons, message_id)
    SELECT account_id, campaign_id, send_id, kind, link_idx, occurred_at, method, left(user_agent, 512),
           cardinality(bot_reasons) > 0, bot_reasons, message_id
    FROM classified
    RETURNING id
), hit_events AS (
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT account_id, CASE kind WHEN 'click' THEN 'send.clicked' ELSE 'send.opened' END, occurred_at,
           jsonb_strip_nulls(jsonb_build_object(
               'campaign_id', CASE WHEN message_id IS NULL THEN campaign_id END,
               'send_id', CASE WHEN message_id IS NULL THEN send_id END,
               'subscriber_id', CASE WHEN message_id IS NULL THEN subscriber_id END,
               'message_id', message_id, 'email', email,
               'link_index', CASE WHEN kind = 'click' THEN link_idx END,
               'url', url,
               'honeypot', CASE WHEN kind = 'click' THEN link_idx = 0 END,
               'suspected_bot', cardinality(bot_reasons) > 0,
               'human', cardinality(bot_reasons) = 0,
               'bot_reasons', to_jsonb(bot_reasons)))
    FROM classified
), counted AS (
    -- The hits that count: every open, and clicks on a real link.
    SELECT c.account_id, c.campaign_id, c.send_id, c.kind, c.link_idx, c.domain,
           cardinality(c.bot_reasons) = 0 AS people
    FROM classified c
    WHERE c.kind = 'open' OR c.link_idx > 0
), firsts AS (
    INSERT INTO engagement_firsts (campaign_id, account_id, send_id, kind, link_idx, people)
    SELECT DISTINCT c.campaign_id, c.account_id, c.send_id, c.kind, k.link_idx, k.people
    FROM counted c
    CROSS JOIN LATERAL (VALUES (0, false), (0, true), (c.link_idx, false), (c.link_idx, true)) AS k(link_idx, people)
    WHERE (c.people OR NOT k.people) AND (k.link_idx = 0 OR c.kind = 'click')
    ON CONFLICT DO NOTHING
    RETURNING campaign_id, send_id, kind, link_idx, people
), first_domains AS (
    SELECT f.campaign_id, f.send_id, f.kind, f.link_idx, f.people,
           (SELECT c.domain FROM counted c WHERE c.campaign_id = f.campaign_id AND c.send_id = f.send_id LIMIT 1) AS domain,
           (SELECT c.account_id FROM counted c WHERE c.campaign_id = f.campaign_id LIMIT 1) AS account_id
    FROM firsts f
), by_domain AS (
    INSERT INTO campaign_counts (campaign_id, account_id, domain, opens, opens_people, clicks, clicks_people,
                                 opened, opened_people, clicked, clicked_people)
    SELECT d.campaign_id, d.account_id, d.domain, sum(d.opens), sum(d.opens_people), sum(d.clicks), sum(d.clicks_people),
           sum(d.opened), sum(d.opened_people), sum(d.clicked), sum(d.clicked_people)
    FROM (
        SELECT c.campaign_id, c.account_id, c.domain,
               count(*) FILTER (WHERE c.kind = 'open') AS opens,
               count(*) FILTER (WHERE c.kind = 'open' AND c.people) AS opens_people,
               count(*) FILTER (WHERE c.kind = 'click') AS clicks,
               count(*) FILTER (WHERE c.kind = 'click' AND c.people) AS clicks_people,
               0 AS opened, 0 AS opened_people, 0 AS clicked, 0 AS clicked_people
        FROM counted c GROUP BY 1, 2, 3
        UNION ALL
        SELECT f.campaign_id, f.account_id, f.domain, 0, 0, 0, 0,
               count(*) FILTER (WHERE f.kind = 'open' AND NOT f.people),
               count(*) FILTER (WHERE f.kind = 'open' AND f.people),
               count(*) FILTER (WHERE f.kind = 'click' AND NOT f.people),
               count(*) FILTER (WHERE f.kind = 'click' AND f.people)
        FROM first_domains f WHERE f.link_idx = 0 GROUP BY 1, 2, 3
    ) d
    GROUP BY 1, 2, 3 ORDER BY 1, 3
    ON CONFLICT (campaign_id, domain) DO UPDATE SET
        opens          = campaign_counts.opens + excluded.opens,
        opens_people   = campaign_counts.opens_people + excluded.opens_people,
        clicks         = campaign_counts.clicks + excluded.clicks,
        clicks_people  = campaign_counts.clicks_people + excluded.clicks_people,
        opened         = campaign_counts.opened + excluded.opened,
        opened_people  = campaign_counts.opened_people + excluded.opened_people,
        clicked        = campaign_counts.clicked + excluded.clicked,
        clicked_people = campaign_counts.clicked_people + excluded.clicked_people
), by_link AS (
    INSERT INTO campaign_link_counts (campaign_id, account_id, link_idx, clicks, clicks_people, clicked, clicked_people)
    SELECT d.campaign_id, d.account_id, d.link_idx, sum(d.clicks), sum(d.clicks_people), sum(d.clicked), sum(d.clicked_people)
    FROM (
        SELECT c.campaign_id, c.account_id, c.link_idx, count(*) AS clicks,
               count(*) FILTER (WHERE c.people) AS clicks_people, 0 AS clicked, 0 AS clicked_people
        FROM counted c WHERE c.kind = 'click' GROUP BY 1, 2, 3
        UNION ALL
        SELECT f.campaign_id, f.account_id, f.link_idx, 0, 0,
               count(*) FILTER (WHERE NOT f.people), count(*) FILTER (WHERE f.people)
        FROM first_domains f WHERE f.kind = 'click' AND f.link_idx > 0 GROUP BY 1, 2, 3
    ) d
    GROUP BY 1, 2, 3 ORDER BY 1, 3
    ON CONFLICT (campaign_id, link_idx) DO UPDATE SET
        clicks         = campaign_link_counts.clicks + excluded.clicks,
        clicks_people  = campaign_link_counts.clicks_people + excluded.clicks_people,
        clicked        = campaign_link_counts.clicked + excluded.clicked,
        clicked_people = campaign_link_counts.clicked_people + excluded.clicked_people
), by_day AS (
    INSERT INTO account_day_counts (account_id, day, kind, opened_people, clicked_people)
    SELECT f.account_id, (now() AT TIME ZONE 'UTC')::date, k.kind,
           count(*) FILTER (WHERE f.kind = 'open'), count(*) FILTER (WHERE f.kind = 'click')
    FROM first_domains f JOIN campaigns k ON k.id = f.campaign_id
    WHERE f.people AND f.link_idx = 0
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (account_id, day, kind) DO UPDATE SET
        opened_people  = account_day_counts.opened_people + excluded.opened_people,
        clicked_people = account_day_counts.clicked_people + excluded.clicked_people
)
SELECT count(*) FROM inserted;

-- name: TrackingLinkStats :many
-- Per link of a campaign: every hit, distinct recipients, and the same for the hits
-- not suspected of being a bot.
SELECT l.idx, l.url,
       count(h.id)::bigint                                                 AS total,
       count(DISTINCT h.send_id)::bigint                                   AS unique_total,
       count(h.id) FILTER (WHERE NOT h.suspected_bot)::bigint              AS human,
       count(DISTINCT h.send_id) FILTER (WHERE NOT h.suspected_bot)::bigint AS unique_human
FROM tracked_links l
LEFT JOIN tracking_hits h ON h.campaign_id = l.campaign_id AND h.kind = 'click' AND h.link_idx = l.idx
WHERE l.account_id = @account_id AND l.campaign_id = @campaign_id
GROUP BY l.idx, l.url
ORDER BY l.idx;

-- name: TrackingCampaignTotals :one
-- A campaign's click and open totals (honeypot hits are counted apart, never as clicks).
SELECT
    count(*) FILTER (WHERE kind = 'click' AND link_idx > 0)::bigint                                     AS clicks,
    count(DISTINCT send_id) FILTER (WHERE kind = 'click' AND link_idx > 0)::bigint                      AS unique_clicks,
    count(*) FILTER (WHERE kind = 'click' AND link_idx > 0 AND NOT suspected_bot)::bigint               AS human_clicks,
    count(DISTINCT send_id) FILTER (WHERE kind = 'click' AND link_idx > 0 AND NOT suspected_bot)::bigint AS unique_human_clicks,
    count(*) FILTER (WHERE kind = 'click' AND link_idx = 0)::bigint                                     AS honeypot_hits,
    count(*) FILTER (WHERE kind = 'open')::bigint                                                       AS opens,
    count(DISTINCT send_id) FILTER (WHERE kind = 'open')::bigint                                        AS unique_opens,
    count(*) FILTER (WHERE kind = 'open' AND NOT suspected_bot)::bigint                                 AS human_opens,
    count(DISTINCT send_id) FILTER (WHERE kind = 'open' AND NOT suspected_bot)::bigint                  AS unique_human_opens
FROM tracking_hits
WHERE account_id = @account_id AND campaign_id = @campaign_id;

-- name: ArchiveAccount :one
-- The account behind a public archive address (its random public id, never the
-- sequential one).
SELECT id, name FROM accounts WHERE public_id = @public_id;

-- name: ArchiveCampaignList :many
-- The account's published campaigns that went out, newest first.
SELECT id, name, subject, started_at FROM campaigns
WHERE account_id = @account_id AND archive AND kind = 'campaign' AND status IN ('sending', 'paused', 'sent')
ORDER BY id DESC
LIMIT 200;

-- name: ArchiveCampaignGet :one
-- One published campaign, only when it is in the account's archive.
SELECT id, name, subject, from_email, from_name, html_template, text_template FROM campaigns
WHERE account_id = @account_id AND id = @id AND archive AND kind = 'campaign' AND status IN ('sending', 'paused', 'sent');

-- name: WebViewSend :one
-- What a "view in browser" link renders: the send its token names, with its
-- campaign's templates and its recipient's fields as they are now. A sequence
-- step's send is one row of its step campaign and shows the event data it was
-- queued with, as its mail did ('{}' when it had none); a message stream's rows
-- are messages (MessageWebView).
SELECT s.id, s.subscriber_id, s.email, c.subject, c.from_email, c.from_name, c.html_template, c.text_template,
       coalesce(sub.name, '')::text AS name, coalesce(sub.attributes, '{}'::jsonb) AS attributes,
       coalesce(sd.data, '{}'::jsonb) AS event
FROM sends s
JOIN campaigns c ON c.id = s.campaign_id AND c.account_id = s.account_id AND c.kind IN ('campaign', 'sequence')
LEFT JOIN subscribers sub ON sub.account_id = s.account_id AND sub.id = s.subscriber_id
LEFT JOIN sequence_send_data sd ON c.kind = 'sequence' AND sd.account_id = s.account_id AND sd.job_id = s.job_id
WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.id = @send_id;

-- name: MessageWebView :one
-- What a message's "view in browser" link renders: the message its token names,
-- with its own templates and data (the recipient's), only while the send row the
-- token names is still that message's; retention deleting the message (and its
-- send row) makes the link answer 404.
SELECT m.id, s.email, m.to_name, m.subject, m.html, m.text, m.data, m.category, s.campaign_id AS stream_id
FROM messages m
JOIN sends s ON s.account_id = m.account_id AND s.id = @send_id AND s.campaign_id = @stream_id
    AND s.subscriber_id = m.id
WHERE m.account_id = @account_id AND m.id = @message_id;

-- name: MessageLinksInsert :exec
-- Stores a tracked message's URLs when it is accepted, numbered from 1 in the order given.
INSERT INTO message_links (account_id, message_id, idx, url)
SELECT @account_id, @message_id, u.ord, u.url
FROM unnest(@urls::text[]) WITH ORDINALITY AS u(url, ord);

-- name: MessageLinksGet :many
-- A message's tracked URLs, read by the redirect once per message and cached.
SELECT idx, url FROM message_links
WHERE account_id = @account_id AND message_id = @message_id
ORDER BY idx;

-- name: MessageEngagement :many
-- Click and open counts of the account's messages among @ids (honeypot hits apart).
SELECT message_id::bigint AS message_id,
       count(*) FILTER (WHERE kind = 'click' AND link_idx > 0)::bigint                       AS clicks,
       count(*) FILTER (WHERE kind = 'click' AND link_idx > 0 AND NOT suspected_bot)::bigint AS human_clicks,
       count(*) FILTER (WHERE kind = 'click' AND link_idx = 0)::bigint                       AS honeypot_hits,
       count(*) FILTER (WHERE kind = 'open')::bigint                                         AS opens,
       count(*) FILTER (WHERE kind = 'open' AND NOT suspected_bot)::bigint                   AS human_opens
FROM tracking_hits
WHERE account_id = @account_id AND message_id = ANY(@ids::bigint[])
GROUP BY message_id;
