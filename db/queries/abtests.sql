-- A/B tests of campaigns (migration 00630, docs/ab-tests.md): variants, the
-- winner's compare-and-set, the release of the rest, the per-variant report.

-- name: CampaignVariantsList :many
-- A campaign's variants, in order (idx 1 is variant A).
SELECT idx, subject, from_name, html_template, text_template, template_id
FROM campaign_variants
WHERE account_id = @account_id AND campaign_id = @campaign_id
ORDER BY idx;

-- name: CampaignVariantsDelete :exec
DELETE FROM campaign_variants WHERE account_id = @account_id AND campaign_id = @campaign_id;

-- name: CampaignVariantInsert :exec
INSERT INTO campaign_variants (account_id, campaign_id, idx, subject, from_name, html_template, text_template, template_id)
VALUES (@account_id, @campaign_id, @idx, sqlc.narg('subject'), sqlc.narg('from_name'), sqlc.narg('html_template'),
        sqlc.narg('text_template'), sqlc.narg('template_id'));

-- name: CampaignABSet :one
-- Sets (or, with a NULL mode, clears) a draft campaign's A/B settings; the variants
-- are replaced in the same transaction. Only a draft changes: 0 rows otherwise.
UPDATE campaigns
SET ab_mode = sqlc.narg('mode')::text, ab_variants = sqlc.narg('variants')::smallint,
    ab_test_percent = sqlc.narg('test_percent')::smallint, ab_wait_seconds = sqlc.narg('wait_seconds')::int,
    ab_metric = sqlc.narg('metric')::text, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft'
RETURNING id;

-- name: CampaignVariantsFreezeTemplates :exec
-- At approval, a variant that names a template takes its subject and content (as
-- the campaign's own template is frozen by CampaignFreezeTemplate), so a later edit
-- of the template does not change what the variant sends.
UPDATE campaign_variants v
SET subject = t.subject, html_template = t.html, text_template = t.text
FROM templates t
WHERE v.account_id = @account_id AND v.campaign_id = @campaign_id
  AND t.account_id = @account_id AND t.id = v.template_id;

-- name: CampaignWinnerSet :one
-- The winner of a 'test' campaign, once: a compare-and-set on ab_winner IS NULL,
-- by the scheduler (any replica) or a person. Zero rows: already chosen, not a
-- test, not sending or paused, or no such variant. The rest's rows are released
-- afterwards (SendReleaseRest); the campaign.winner_chosen event is written here.
WITH chosen AS (
    UPDATE campaigns k
    SET ab_winner = @variant::smallint, ab_winner_at = coalesce(sqlc.narg('now')::timestamptz, now()),
        ab_winner_by = @chosen_by::text, updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
    WHERE k.account_id = @account_id AND k.id = @id AND k.ab_mode = 'test' AND k.ab_winner IS NULL
      AND k.status IN ('sending', 'paused') AND @variant::smallint BETWEEN 1 AND k.ab_variants
    RETURNING k.id, k.account_id, k.name, k.ab_winner, k.ab_winner_by, k.ab_metric
), chosen_event AS (
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT c.account_id, 'campaign.winner_chosen', coalesce(sqlc.narg('now')::timestamptz, now()),
           jsonb_build_object('campaign_id', c.id, 'name', c.name, 'variant', chr(64 + c.ab_winner),
                              'chosen_by', c.ab_winner_by, 'metric', c.ab_metric)
    FROM chosen c
)
SELECT c.id, c.ab_winner FROM chosen c;

-- name: CampaignListWinnerDue :many
-- 'test' campaigns whose wait has run out with no winner yet, picked by a metric.
SELECT id, account_id, ab_metric, ab_variants FROM campaigns
WHERE status = 'sending' AND ab_mode = 'test' AND ab_winner IS NULL AND ab_metric <> 'manual'
  AND started_at + ab_wait_seconds * interval '1 second' <= coalesce(sqlc.narg('now')::timestamptz, now())
ORDER BY id
LIMIT 100;

-- name: CampaignListRestHeld :many
-- Campaigns with a winner whose rest still has rows to release: one probe of
-- sends_claim_idx per campaign (the held rows are due at 'infinity').
SELECT c.id, c.account_id FROM campaigns c
WHERE c.ab_winner IS NOT NULL AND c.status IN ('sending', 'paused')
  AND EXISTS (SELECT 1 FROM sends s
              WHERE s.campaign_id = c.id AND s.status = 'queued' AND s.next_attempt_at = 'infinity')
ORDER BY c.id
LIMIT 100;

-- name: SendReleaseRest :execrows
-- Up to 1,000 held rows of the rest of a test (due at 'infinity', no variant) get
-- the winner and become due at once, in the statement's own short transaction
-- (every account's event readers wait below the oldest running transaction, so a
-- large rest is not released in one). Only once the campaign has a winner; the
-- caller repeats until nothing is left, and any executor finishes a release a
-- killed process left half-done (CampaignListRestHeld). A row keeps its one send
-- row and job id: the variant is only recorded on it.
UPDATE sends d
SET variant = c.ab_winner, next_attempt_at = '-infinity', updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
FROM campaigns c
WHERE c.account_id = @account_id AND c.id = @campaign_id AND c.ab_winner IS NOT NULL
  AND d.id IN (
      SELECT s.id FROM sends s
      WHERE s.campaign_id = @campaign_id AND s.status = 'queued' AND s.next_attempt_at = 'infinity'
      ORDER BY s.next_attempt_at, s.id -- the order of sends_claim_idx, which holds them
      LIMIT 1000
      FOR UPDATE SKIP LOCKED)
  AND d.status = 'queued' AND d.next_attempt_at = 'infinity';

-- name: CampaignVariantReport :many
-- Per variant: rows, sent, and recipients who opened or clicked as people (hits
-- suspected of being a bot left out, the honeypot link never counted as a click).
-- Rows of the rest still held (no variant yet) are left out. Reads the campaign's
-- rows and hits; a report, not a hot path.
WITH people AS (
    SELECT h.send_id,
           bool_or(h.kind = 'open') AS opened,
           bool_or(h.kind = 'click' AND h.link_idx > 0) AS clicked
    FROM tracking_hits h
    WHERE h.account_id = @account_id AND h.campaign_id = @campaign_id AND NOT h.suspected_bot
    GROUP BY h.send_id
)
SELECT s.variant::smallint AS variant,
       count(*)::bigint AS recipients,
       count(*) FILTER (WHERE s.status = 'sent')::bigint AS sent,
       count(p.send_id) FILTER (WHERE p.opened)::bigint AS opened,
       count(p.send_id) FILTER (WHERE p.clicked)::bigint AS clicked
FROM sends s
LEFT JOIN people p ON p.send_id = s.id
WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.variant IS NOT NULL
GROUP BY s.variant
ORDER BY s.variant;

-- name: CampaignVariantsForSend :many
-- The variants' content for the executor (the campaign's own fills what a variant
-- leaves out).
SELECT v.idx, coalesce(v.subject, c.subject)::text AS subject, coalesce(v.from_name, c.from_name)::text AS from_name,
       coalesce(v.html_template, c.html_template)::text AS html_template,
       coalesce(v.text_template, c.text_template)::text AS text_template
FROM campaign_variants v
JOIN campaigns c ON c.account_id = v.account_id AND c.id = v.campaign_id
WHERE v.account_id = @account_id AND v.campaign_id = @campaign_id
ORDER BY v.idx;

-- name: CampaignWinnerNextDue :one
-- How long until the next automatic winner falls due (a wait on the database's
-- clock), so the scheduler wakes for it rather than up to a tick late.
SELECT (extract(epoch FROM started_at + ab_wait_seconds * interval '1 second'
                          - coalesce(sqlc.narg('now')::timestamptz, now())) * 1e6)::bigint AS due_in_us
FROM campaigns
WHERE status = 'sending' AND ab_mode = 'test' AND ab_winner IS NULL AND ab_metric <> 'manual'
ORDER BY started_at + ab_wait_seconds * interval '1 second'
LIMIT 1;
