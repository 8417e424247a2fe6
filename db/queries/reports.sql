-- Campaign reports and account analytics, read from the kept counters
-- (migration 00460, docs/reports.md): a report costs a few index reads whatever
-- the campaign's size, and reads the same after send retention deleted its rows.

-- name: ReportCampaignTotals :one
-- A campaign's counters summed over its recipient domains.
SELECT coalesce(sum(sent), 0)::bigint              AS sent,
       coalesce(sum(hard_bounces), 0)::bigint      AS hard_bounces,
       coalesce(sum(soft_bounces), 0)::bigint      AS soft_bounces,
       coalesce(sum(complaints), 0)::bigint        AS complaints,
       coalesce(sum(unsub_one_click), 0)::bigint   AS unsub_one_click,
       coalesce(sum(unsub_preferences), 0)::bigint AS unsub_preferences,
       coalesce(sum(unsub_provider), 0)::bigint    AS unsub_provider,
       coalesce(sum(opens), 0)::bigint             AS opens,
       coalesce(sum(opens_people), 0)::bigint      AS opens_people,
       coalesce(sum(opened), 0)::bigint            AS opened,
       coalesce(sum(opened_people), 0)::bigint     AS opened_people,
       coalesce(sum(clicks), 0)::bigint            AS clicks,
       coalesce(sum(clicks_people), 0)::bigint     AS clicks_people,
       coalesce(sum(clicked), 0)::bigint           AS clicked,
       coalesce(sum(clicked_people), 0)::bigint    AS clicked_people
FROM campaign_counts
WHERE account_id = @account_id AND campaign_id = @campaign_id;

-- name: ReportCampaignDomains :many
-- A campaign's @lim recipient domains with the most messages sent (then by name).
SELECT domain, sent, hard_bounces, soft_bounces, complaints,
       (unsub_one_click + unsub_preferences + unsub_provider)::bigint AS unsubscribes,
       opened, opened_people, clicked, clicked_people
FROM campaign_counts
WHERE account_id = @account_id AND campaign_id = @campaign_id
ORDER BY sent DESC, domain
LIMIT @lim;

-- name: ReportCampaignLinks :many
-- A campaign's tracked links with their click counters (zeros for a link nobody
-- clicked).
SELECT l.idx, l.url, coalesce(k.clicks, 0)::bigint AS clicks, coalesce(k.clicks_people, 0)::bigint AS clicks_people,
       coalesce(k.clicked, 0)::bigint AS clicked, coalesce(k.clicked_people, 0)::bigint AS clicked_people
FROM tracked_links l
LEFT JOIN campaign_link_counts k ON k.campaign_id = l.campaign_id AND k.link_idx = l.idx
WHERE l.account_id = @account_id AND l.campaign_id = @campaign_id
ORDER BY l.idx;

-- name: ReportAccountDays :many
-- An account's day counters from @from_day to @to_day (both included), by day and kind.
SELECT day, kind, sent, hard_bounces, soft_bounces, complaints, unsubscribes, opened_people, clicked_people
FROM account_day_counts
WHERE account_id = @account_id AND day BETWEEN @from_day::date AND @to_day::date
ORDER BY day, kind;
