-- Kept report counters for the campaigns whose sends were acknowledged before
-- migration 00460 (docs/reports.md): their campaign_counts keep no 'sent', so a
-- report showed zeros. Computed from the send rows that still exist, per recipient
-- domain — sent, bounces (hard, soft), complaints and unsubscribes by the send's
-- feedback — plus the sent rows retention archived (campaign_send_archive, which
-- keeps no address nor feedback: under the domain ''). Unsubscribes recorded
-- before 00460 carry no source (feedback_source NULL) and count as 'provider'.
-- Opens and clicks are not backfilled. A campaign counts as one of those when it
-- has sent rows (live or archived) and no kept 'sent' at all: an acknowledgement
-- since 00460 always keeps one. Each counter becomes the greater of what it holds
-- (feedback that came after 00460, for rows since deleted) and the recount, so
-- running it again changes nothing.

-- +goose Up
WITH bare AS (
    SELECT c.id FROM campaigns c
    WHERE NOT EXISTS (SELECT 1 FROM campaign_counts cc WHERE cc.campaign_id = c.id AND cc.sent > 0)
      AND (EXISTS (SELECT 1 FROM sends s WHERE s.campaign_id = c.id AND s.status = 'sent')
           OR EXISTS (SELECT 1 FROM campaign_send_archive a WHERE a.campaign_id = c.id AND a.status = 'sent' AND a.n > 0))
), recount AS (
    SELECT s.campaign_id, s.account_id, substring(s.email_lower FROM '[^@]*$') AS domain,
           count(*) FILTER (WHERE s.status = 'sent') AS sent,
           count(*) FILTER (WHERE s.feedback = 'hard_bounce') AS hard_bounces,
           count(*) FILTER (WHERE s.feedback = 'soft_bounce') AS soft_bounces,
           count(*) FILTER (WHERE s.feedback = 'complaint') AS complaints,
           count(*) FILTER (WHERE s.feedback = 'unsubscribe' AND s.feedback_source = 'one_click') AS unsub_one_click,
           count(*) FILTER (WHERE s.feedback = 'unsubscribe' AND s.feedback_source = 'preferences') AS unsub_preferences,
           count(*) FILTER (WHERE s.feedback = 'unsubscribe'
                              AND coalesce(s.feedback_source, 'provider') = 'provider') AS unsub_provider
    FROM sends s JOIN bare b ON b.id = s.campaign_id
    GROUP BY 1, 2, 3
    UNION ALL
    SELECT a.campaign_id, a.account_id, '', a.n, 0, 0, 0, 0, 0, 0
    FROM campaign_send_archive a JOIN bare b ON b.id = a.campaign_id
    WHERE a.status = 'sent'
)
INSERT INTO campaign_counts (campaign_id, account_id, domain, sent, hard_bounces, soft_bounces, complaints,
                             unsub_one_click, unsub_preferences, unsub_provider)
SELECT r.campaign_id, r.account_id, r.domain, sum(r.sent), sum(r.hard_bounces), sum(r.soft_bounces),
       sum(r.complaints), sum(r.unsub_one_click), sum(r.unsub_preferences), sum(r.unsub_provider)
FROM recount r
GROUP BY 1, 2, 3
ORDER BY 1, 3
ON CONFLICT (campaign_id, domain) DO UPDATE SET
    sent              = greatest(campaign_counts.sent, excluded.sent),
    hard_bounces      = greatest(campaign_counts.hard_bounces, excluded.hard_bounces),
    soft_bounces      = greatest(campaign_counts.soft_bounces, excluded.soft_bounces),
    complaints        = greatest(campaign_counts.complaints, excluded.complaints),
    unsub_one_click   = greatest(campaign_counts.unsub_one_click, excluded.unsub_one_click),
    unsub_preferences = greatest(campaign_counts.unsub_preferences, excluded.unsub_preferences),
    unsub_provider    = greatest(campaign_counts.unsub_provider, excluded.unsub_provider);

-- +goose Down
-- Nothing: the counters it computed are the ones the campaigns should have kept.
SELECT 1;
