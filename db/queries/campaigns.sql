-- API side of campaigns: CRUD while draft, and the transitions a tenant may make. Each
-- transition is one compare-and-set UPDATE … WHERE status = expected RETURNING; zero
-- rows means the campaign is missing or in another state, which the caller tells apart
-- with CampaignStatusGet. approved → sending and sending → sent belong to the executor.

-- name: CampaignCreate :one
INSERT INTO campaigns (account_id, name, subject, from_email, from_name, reply_to,
                       html_template, text_template, language, list_ids, ambiguous_policy, sender_id, segment_id)
VALUES (@account_id, @name, @subject, @from_email, @from_name, @reply_to,
        @html_template, @text_template, @language, @list_ids::bigint[], @ambiguous_policy, sqlc.narg('sender_id'),
        sqlc.narg('segment_id')::bigint)
RETURNING *;

-- name: CampaignGet :one
-- kind = 'campaign' here and below: an account's message stream is no campaign of the API.
SELECT * FROM campaigns WHERE account_id = @account_id AND id = @id AND kind = 'campaign';

-- name: CampaignStatusGet :one
SELECT status FROM campaigns WHERE account_id = @account_id AND id = @id AND kind = 'campaign';

-- name: CampaignList :many
SELECT * FROM campaigns
WHERE account_id = @account_id AND id > @after_id AND kind = 'campaign'
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
ORDER BY id
LIMIT @lim;

-- name: CampaignUpdateDraft :one
UPDATE campaigns SET
    name             = coalesce(sqlc.narg('name'), name),
    subject          = coalesce(sqlc.narg('subject'), subject),
    from_email       = coalesce(sqlc.narg('from_email'), from_email),
    from_name        = coalesce(sqlc.narg('from_name'), from_name),
    reply_to         = coalesce(sqlc.narg('reply_to'), reply_to),
    html_template    = coalesce(sqlc.narg('html_template'), html_template),
    text_template    = coalesce(sqlc.narg('text_template'), text_template),
    language         = coalesce(sqlc.narg('language'), language),
    list_ids         = coalesce(sqlc.narg('list_ids')::bigint[], list_ids),
    ambiguous_policy = coalesce(sqlc.narg('ambiguous_policy'), ambiguous_policy),
    -- sender_id: NULL keeps it, 0 clears it (the account default applies again).
    sender_id        = CASE WHEN sqlc.narg('sender_id')::bigint IS NULL THEN sender_id
                            ELSE nullif(sqlc.narg('sender_id')::bigint, 0) END,
    -- 0 clears the segment; NULL keeps it.
    segment_id       = CASE WHEN sqlc.narg('segment_id')::bigint IS NULL THEN segment_id
                            ELSE nullif(sqlc.narg('segment_id')::bigint, 0) END,
    updated_at       = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft'
RETURNING *;

-- name: CampaignDeleteDraft :execrows
DELETE FROM campaigns WHERE account_id = @account_id AND id = @id AND status = 'draft';

-- name: CampaignApprove :one
UPDATE campaigns SET
    status        = 'approved',
    scheduled_for = coalesce(sqlc.narg('scheduled_for')::timestamptz, now()),
    approved_at   = now(),
    updated_at    = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft'
RETURNING *;

-- name: CampaignUnapprove :one
UPDATE campaigns SET status = 'draft', scheduled_for = NULL, approved_at = NULL, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'approved'
RETURNING *;

-- name: CampaignPause :one
-- A pause by hand carries no system reason.
UPDATE campaigns SET status = 'paused', paused_reason = NULL, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'sending' AND kind = 'campaign'
RETURNING *;

-- name: CampaignResume :one
UPDATE campaigns SET status = 'sending', paused_reason = NULL, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'paused'
RETURNING *;

-- name: CampaignCancel :one
UPDATE campaigns SET status = 'cancelled', cancelled_at = now(), updated_at = now()
WHERE account_id = @account_id AND id = @id AND status IN ('draft', 'approved', 'sending', 'paused')
  AND kind = 'campaign'
RETURNING *;

-- name: SendCancelCampaignQueued :execrows
-- Runs in the cancel's transaction: no queued recipient of a cancelled campaign is
-- claimed afterwards. Rows already leased finish their attempt. (One statement for the
-- whole campaign, so the cancel is atomic; the executor's batched SendCancelQueued
-- is its sweeper for campaigns cancelled by other means.)
UPDATE sends SET status = 'cancelled', updated_at = now()
WHERE account_id = @account_id AND campaign_id = @campaign_id AND status = 'queued';

-- name: CampaignNotify :exec
-- Wakes the executors on commit (LISTEN/NOTIFY is transactional).
SELECT pg_notify(@channel::text, @payload::text);

-- name: CampaignSendCounts :one
-- The live rows plus the rows retention deleted (campaign_send_archive), which the
-- deleting statement counted there. The campaign's status is read in the same
-- statement, so from one snapshot with the counts: counts read with a final status
-- are final (the stats cache relies on it).
WITH counted AS (
    SELECT s.status, count(*) AS n FROM sends s
    WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id
    GROUP BY s.status
    UNION ALL
    SELECT a.status, a.n FROM campaign_send_archive a
    WHERE a.account_id = @account_id AND a.campaign_id = @campaign_id
)
SELECT coalesce((SELECT c.status FROM campaigns c WHERE c.account_id = @account_id AND c.id = @campaign_id), '')::text
           AS campaign_status,
       coalesce(sum(n) FILTER (WHERE status = 'queued'), 0)::bigint     AS queued,
       coalesce(sum(n) FILTER (WHERE status = 'sending'), 0)::bigint    AS sending,
       coalesce(sum(n) FILTER (WHERE status = 'sent'), 0)::bigint       AS sent,
       coalesce(sum(n) FILTER (WHERE status = 'failed'), 0)::bigint     AS failed,
       coalesce(sum(n) FILTER (WHERE status = 'suppressed'), 0)::bigint AS suppressed,
       coalesce(sum(n) FILTER (WHERE status = 'cancelled'), 0)::bigint  AS cancelled,
       coalesce(sum(n) FILTER (WHERE status = 'unknown'), 0)::bigint    AS unknown
FROM counted;

-- name: SendList :many
SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id
FROM sends
WHERE account_id = @account_id AND campaign_id = @campaign_id AND id > @after_id
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
ORDER BY id
LIMIT @lim;

-- name: CampaignSenderRules :one
-- The sender a campaign would send through (its own, else the account default) and
-- the From rules it imposes; no row: the environment's provider, which imposes none.
SELECT s.id, s.allowed_from FROM senders s
WHERE s.account_id = @account_id
  AND (s.id = sqlc.narg('sender_id')::bigint OR (sqlc.narg('sender_id')::bigint IS NULL AND s.is_default));
