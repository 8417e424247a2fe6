-- API side of campaigns: CRUD while draft, and the transitions a tenant may make. Each
-- transition is one compare-and-set UPDATE … WHERE status = expected RETURNING; zero
-- rows means the campaign is missing or in another state, which the caller tells apart
-- with CampaignStatusGet. approved → sending and sending → sent belong to the executor.
--
-- The rule for every statement the /v1/campaigns routes reach (here, and the
-- Campaign* statements of templates.sql and tracking.sql): it matches kind =
-- 'campaign' only. A sequence step's campaign and an account's message stream are
-- campaigns rows too, run by their own services; through this API their ids are
-- unknown (404) and nothing about them changes — even where the status alone would
-- already exclude them, so the rule does not hang on which statuses a kind can take.

-- name: CampaignCreate :one
INSERT INTO campaigns (account_id, name, subject, from_email, from_name, reply_to,
                       html_template, text_template, language, list_ids, ambiguous_policy, sender_id, segment_id,
                       created_by_type, created_by_id)
VALUES (@account_id, @name, @subject, @from_email, @from_name, @reply_to,
        @html_template, @text_template, @language, @list_ids::bigint[], @ambiguous_policy, sqlc.narg('sender_id'),
        sqlc.narg('segment_id')::bigint, sqlc.narg('created_by_type')::text, sqlc.narg('created_by_id')::bigint)
RETURNING *;

-- name: CampaignGet :one
SELECT * FROM campaigns WHERE account_id = @account_id AND id = @id AND kind = 'campaign';

-- name: CampaignStatusGet :one
SELECT status FROM campaigns WHERE account_id = @account_id AND id = @id AND kind = 'campaign';

-- name: CampaignList :many
SELECT * FROM campaigns
WHERE account_id = @account_id AND id > @after_id AND kind = 'campaign'
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
ORDER BY id
LIMIT @lim;

-- name: CampaignListNewest :many
-- CampaignList newest first: a keyset page in descending id order, before
-- @before_id (0: from the newest), so the campaign made last is on the first page
-- however many the account has.
SELECT * FROM campaigns
WHERE account_id = @account_id AND (@before_id::bigint = 0 OR id < @before_id::bigint) AND kind = 'campaign'
  AND (sqlc.narg('status')::text IS NULL OR status = sqlc.narg('status')::text)
ORDER BY id DESC
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
    -- Naming a sender leaves the sender pool it named (a campaign names one or the other).
    pool_id          = CASE WHEN coalesce(sqlc.narg('sender_id')::bigint, 0) <> 0 THEN NULL ELSE pool_id END,
    -- 0 clears the segment; NULL keeps it.
    segment_id       = CASE WHEN sqlc.narg('segment_id')::bigint IS NULL THEN segment_id
                            ELSE nullif(sqlc.narg('segment_id')::bigint, 0) END,
    updated_at       = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft' AND kind = 'campaign'
RETURNING *;

-- name: CampaignDeleteDraft :execrows
DELETE FROM campaigns WHERE account_id = @account_id AND id = @id AND status = 'draft' AND kind = 'campaign';

-- name: CampaignApprove :one
-- When the From domain was checked before this statement (DNS is never looked up
-- inside a transaction), checked_from and checked_sender_id are the From and the
-- sender that check saw: an edit committed in between changes them and the CAS
-- matches nothing, so an unchecked From is never approved.
UPDATE campaigns SET
    status        = 'approved',
    scheduled_for = coalesce(sqlc.narg('scheduled_for')::timestamptz, now()),
    approved_at   = now(),
    updated_at    = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft' AND kind = 'campaign'
  AND (NOT sqlc.arg(guarded)::boolean
       OR (from_email = sqlc.arg(checked_from)::text
           AND sender_id IS NOT DISTINCT FROM sqlc.narg('checked_sender_id')::bigint))
RETURNING *;

-- name: CampaignUnapprove :one
UPDATE campaigns SET status = 'draft', scheduled_for = NULL, approved_at = NULL, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'approved' AND kind = 'campaign'
RETURNING *;

-- name: CampaignPause :one
-- A pause by hand carries no system reason.
UPDATE campaigns SET status = 'paused', paused_reason = NULL, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'sending' AND kind = 'campaign'
RETURNING *;

-- name: CampaignResume :one
-- A paused sequence's step campaigns are paused too: they resume with their
-- sequence (SequenceCampaignsSetStatus), never here.
UPDATE campaigns SET status = 'sending', paused_reason = NULL, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'paused' AND kind = 'campaign'
RETURNING *;

-- name: CampaignCancel :one
UPDATE campaigns SET status = 'cancelled', cancelled_at = now(), updated_at = now()
WHERE account_id = @account_id AND id = @id AND status IN ('draft', 'approved', 'building', 'sending', 'paused')
  AND kind = 'campaign'
RETURNING *;

-- name: CampaignNotify :exec
-- Wakes the executors on commit (LISTEN/NOTIFY is transactional).
SELECT pg_notify(@channel::text, @payload::text);

-- name: CampaignSendCounts :one
-- The live rows plus the rows retention deleted (campaign_send_archive), which the
-- deleting statement counted there. The campaign's status is read in the same
-- statement, so from one snapshot with the counts: counts read with a final status
-- were taken after the campaign reached it (the stats cache relies on it). A
-- cancelled campaign's queued rows are closed in batches after the cancel commits
-- (SendSweepCancelled), so its queued count falls to 0 within moments of it.
WITH counted AS (
    SELECT s.status, count(*) AS n FROM sends s
    WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id
    GROUP BY s.status
    UNION ALL
    SELECT a.status, a.n FROM campaign_send_archive a
    WHERE a.account_id = @account_id AND a.campaign_id = @campaign_id
)
SELECT coalesce((SELECT c.status FROM campaigns c
                  WHERE c.account_id = @account_id AND c.id = @campaign_id AND c.kind = 'campaign'), '')::text
           AS campaign_status,
       coalesce(sum(n) FILTER (WHERE status = 'queued'), 0)::bigint     AS queued,
       coalesce(sum(n) FILTER (WHERE status = 'sending'), 0)::bigint    AS sending,
       coalesce(sum(n) FILTER (WHERE status = 'sent'), 0)::bigint       AS sent,
       coalesce(sum(n) FILTER (WHERE status = 'failed'), 0)::bigint     AS failed,
       coalesce(sum(n) FILTER (WHERE status = 'suppressed'), 0)::bigint AS suppressed,
       coalesce(sum(n) FILTER (WHERE status = 'cancelled'), 0)::bigint  AS cancelled,
       coalesce(sum(n) FILTER (WHERE status = 'unknown'), 0)::bigint    AS unknown
FROM counted;

-- name: CampaignStatusCounts :one
-- CampaignSendCounts from the kept counters, whatever the campaign's size: sent
-- from campaign_counts (SendAckMany), failed, unknown, suppressed and cancelled
-- from campaign_status_counts (every statement that moves a row into or out of
-- them adjusts them), and only queued and sending counted from the rows, through
-- their partial indexes (few once the campaign is done). Retention's deletes leave
-- the counters as they are, so archived rows are in them already. Status and
-- counts are read in one statement, as CampaignSendCounts reads them.
SELECT coalesce((SELECT c.status FROM campaigns c
                  WHERE c.account_id = @account_id AND c.id = @campaign_id AND c.kind = 'campaign'), '')::text
           AS campaign_status,
       (SELECT count(*) FROM sends s
        WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.status = 'queued')::bigint AS queued,
       (SELECT count(*) FROM sends s
        WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.status = 'sending')::bigint AS sending,
       (SELECT coalesce(sum(cc.sent), 0) FROM campaign_counts cc
        WHERE cc.account_id = @account_id AND cc.campaign_id = @campaign_id)::bigint AS sent,
       coalesce(sum(k.n) FILTER (WHERE k.status = 'failed'), 0)::bigint     AS failed,
       coalesce(sum(k.n) FILTER (WHERE k.status = 'suppressed'), 0)::bigint AS suppressed,
       coalesce(sum(k.n) FILTER (WHERE k.status = 'cancelled'), 0)::bigint  AS cancelled,
       coalesce(sum(k.n) FILTER (WHERE k.status = 'unknown'), 0)::bigint    AS unknown
FROM campaign_status_counts k
WHERE k.account_id = @account_id AND k.campaign_id = @campaign_id;

-- name: SendList :many
-- A campaign's sends in id order after @after_id, of one status or all, read
-- through the partial indexes the send path keeps anyway (migrations 00030, 00160)
-- instead of an index on (campaign_id, id), which every version of every send row
-- would enter: each status group is an ordered, LIMITed range of one index and the
-- groups are merged by id. Queued rows not yet tried (due at -infinity) are a range
-- of sends_claim_idx (campaign_id, next_attempt_at, id) in id order; queued rows
-- waiting for a retry (a later next_attempt_at, a few) are read from the same index
-- and sorted; rows in flight from sends_lease_idx (every in-flight row of the
-- table, a few thousand at most); each settled status is a range of
-- sends_campaign_status_idx (campaign_id, status, id). The status CHECK of sends
-- lists exactly these statuses; a branch of another status than the one asked for
-- is cut before it runs (a one-time filter). TestSendListPlan holds the plan.
SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id
FROM (
  (SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id FROM sends
   WHERE campaign_id = @campaign_id::bigint AND status = 'queued' AND next_attempt_at = '-infinity' AND id > @after_id::bigint AND account_id = @account_id::bigint
     AND (sqlc.narg('status')::text IS NULL OR sqlc.narg('status')::text = 'queued')
   ORDER BY id LIMIT @lim::integer)
  UNION ALL
  (SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id FROM sends
   WHERE campaign_id = @campaign_id::bigint AND status = 'queued' AND next_attempt_at > '-infinity' AND id > @after_id::bigint AND account_id = @account_id::bigint
     AND (sqlc.narg('status')::text IS NULL OR sqlc.narg('status')::text = 'queued')
   ORDER BY id LIMIT @lim::integer)
  UNION ALL
  (SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id FROM sends
   WHERE campaign_id = @campaign_id::bigint AND status = 'sending' AND id > @after_id::bigint AND account_id = @account_id::bigint
     AND (sqlc.narg('status')::text IS NULL OR sqlc.narg('status')::text = 'sending')
   ORDER BY id LIMIT @lim::integer)
  UNION ALL
  (SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id FROM sends
   WHERE campaign_id = @campaign_id::bigint AND status = 'sent' AND id > @after_id::bigint AND account_id = @account_id::bigint
     AND (sqlc.narg('status')::text IS NULL OR sqlc.narg('status')::text = 'sent')
   ORDER BY id LIMIT @lim::integer)
  UNION ALL
  (SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id FROM sends
   WHERE campaign_id = @campaign_id::bigint AND status = 'failed' AND id > @after_id::bigint AND account_id = @account_id::bigint
     AND (sqlc.narg('status')::text IS NULL OR sqlc.narg('status')::text = 'failed')
   ORDER BY id LIMIT @lim::integer)
  UNION ALL
  (SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id FROM sends
   WHERE campaign_id = @campaign_id::bigint AND status = 'suppressed' AND id > @after_id::bigint AND account_id = @account_id::bigint
     AND (sqlc.narg('status')::text IS NULL OR sqlc.narg('status')::text = 'suppressed')
   ORDER BY id LIMIT @lim::integer)
  UNION ALL
  (SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id FROM sends
   WHERE campaign_id = @campaign_id::bigint AND status = 'cancelled' AND id > @after_id::bigint AND account_id = @account_id::bigint
     AND (sqlc.narg('status')::text IS NULL OR sqlc.narg('status')::text = 'cancelled')
   ORDER BY id LIMIT @lim::integer)
  UNION ALL
  (SELECT id, subscriber_id, email, status, attempts, sent_at, last_error, provider_message_id FROM sends
   WHERE campaign_id = @campaign_id::bigint AND status = 'unknown' AND id > @after_id::bigint AND account_id = @account_id::bigint
     AND (sqlc.narg('status')::text IS NULL OR sqlc.narg('status')::text = 'unknown')
   ORDER BY id LIMIT @lim::integer)
) AS s
ORDER BY id
LIMIT @lim::integer;

-- name: SendListByEmail :many
-- A campaign's sends to one address (exact; @email_lower is the address's
-- lower-case form), found without reading the campaign's other rows: the account's
-- subscriber with that address (subscribers' UNIQUE (account_id, email_lower)),
-- then its row by sends' UNIQUE (campaign_id, subscriber_id). The row's own address
-- must be the one asked for, so a subscriber whose address changed after the build
-- is found by the address it was sent to only while it still has it (a send to a
-- deleted subscriber is not found by address). TestSendListByEmailPlan holds the plan.
SELECT s.id, s.subscriber_id, s.email, s.status, s.attempts, s.sent_at, s.last_error, s.provider_message_id
FROM subscribers u
JOIN sends s ON s.campaign_id = @campaign_id AND s.subscriber_id = u.id
WHERE u.account_id = @account_id AND u.email_lower = @email_lower
  AND s.account_id = @account_id AND s.email_lower = @email_lower AND s.id > @after_id
  AND (sqlc.narg('status')::text IS NULL OR s.status = sqlc.narg('status')::text)
ORDER BY s.id
LIMIT @lim;

-- name: CampaignSenderRules :one
-- The sender a campaign would send through (its own, else the account default) and
-- the From rules it imposes; no row: the environment's provider, which imposes none.
SELECT s.id, s.allowed_from FROM senders s
WHERE s.account_id = @account_id
  AND (s.id = sqlc.narg('sender_id')::bigint OR (sqlc.narg('sender_id')::bigint IS NULL AND s.is_default));

-- The executor's start of a campaign, in three short steps so that no transaction
-- that writes events stays open for the length of a build (event readers stop below
-- the oldest running transaction id, for every account): CampaignBuildBegin (CAS
-- into building), the build (CampaignAudienceWindow and CampaignAudiencePage read
-- the audience in a read-only transaction, which takes no transaction id;
-- CampaignBuildInsert writes each window in its own short transaction), then
-- CampaignBuildDone (CAS into sending, with the campaign.started event). Only
-- sending campaigns are claimed and finished, so a crash mid-build leaves a building
-- campaign whose list is not sent as if whole; its builder's executors row goes,
-- build_executor_id becomes NULL, and any executor builds it again (the inserts
-- are ON CONFLICT DO NOTHING, so nothing is built twice).

-- name: CampaignBuildBegin :one
-- approved (and due) → building, or the take-over of a build whose builder is gone
-- (or is this executor, whose build stopped on an error: one scheduler builds one
-- campaign at a time, so its own building campaigns are not being built).
UPDATE campaigns
SET status = 'building', build_executor_id = sqlc.narg('executor_id')::bigint,
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE id = @id AND kind = 'campaign'
  AND ((status = 'approved' AND scheduled_for <= coalesce(sqlc.narg('now')::timestamptz, now()))
       OR (status = 'building' AND (build_executor_id IS NULL
                                    OR build_executor_id = sqlc.narg('executor_id')::bigint)))
RETURNING id, account_id, list_ids, segment_id;

-- name: CampaignListBuildsToResume :many
-- Building campaigns whose builder stopped or died, or is this executor (see
-- CampaignBuildBegin): the scheduler builds them (again).
SELECT id FROM campaigns
WHERE status = 'building' AND (build_executor_id IS NULL OR build_executor_id = sqlc.narg('executor_id')::bigint)
ORDER BY id
LIMIT 100;

-- name: CampaignBuildAny :one
-- Whether any campaign is being built: while one is, the scheduler looks for
-- builds to take over every heartbeat, not only every tick.
SELECT EXISTS (SELECT 1 FROM campaigns WHERE status = 'building')::bool AS building;

-- name: CampaignAudienceWindow :one
-- The last of the next @lim subscribers of the account after @after_id, in id
-- order (subscribers_account_id_idx); 0 when none is left. The build reads the
-- audience window by window so each insert is small, and each window costs the same
-- whatever the filter's selectivity.
SELECT coalesce(max(w.id), 0)::bigint AS upto_id FROM (
    SELECT s.id FROM subscribers s WHERE s.account_id = @account_id AND s.id > @after_id ORDER BY s.id LIMIT @lim
) w;

-- name: CampaignAudiencePage :many
-- The campaign's audience in one window of subscriber ids: the target lists (empty:
-- every subscriber) narrowed by the segment's filter, whatever the status, with
-- whether each subscriber is confirmed and suppressed; the build inserts the
-- confirmed unsuppressed ones and counts the others as left out. A membership
-- counts only while subscribed. The jsonpath is a parameter (the segment's stored
-- predicate); Empty or NULL segment_* = no filter.
-- The campaign's membership EXISTS names the window's bounds too, and the
-- suppression check the account: inside an OR (or the select list) an EXISTS is a
-- SubPlan, which PostgreSQL may run hashed, reading every row its subquery selects
-- once per window. Planned while list_members' statistics predate a large import (the list
-- is "empty"), that read the whole list for every window (TestBuildAfterAnImport);
-- bounded, a hashed SubPlan reads the window's members and no other tenant's
-- suppressions. (The segment's list filter is left as the segment predicate's one
-- text has it, TestSegmentPredicateHasOneText.)
SELECT s.id, (s.status = 'confirmed')::bool AS confirmed,
       EXISTS (SELECT 1 FROM suppressions x
               WHERE x.account_id = @account_id AND x.email_lower = s.email_lower)::bool AS suppressed
FROM subscribers s
WHERE s.account_id = @account_id AND s.id > @after_id AND s.id <= @upto_id
  AND (cardinality(@list_ids::bigint[]) = 0 OR EXISTS (
      SELECT 1 FROM list_members m
      WHERE m.subscriber_id = s.id AND m.account_id = @account_id
        AND m.list_id = ANY(@list_ids::bigint[]) AND m.status = 'subscribed'
        AND m.subscriber_id > @after_id AND m.subscriber_id <= @upto_id))
  AND (sqlc.narg('segment_match')::text IS NULL OR s.attributes @@ sqlc.narg('segment_match')::text::jsonpath)
  AND (cardinality(coalesce(@segment_statuses::text[], '{}')) = 0 OR s.status = ANY(@segment_statuses::text[]))
  AND (cardinality(coalesce(@segment_list_ids::bigint[], '{}')) = 0 OR EXISTS (
      SELECT 1 FROM list_members m
      WHERE m.subscriber_id = s.id AND m.account_id = @account_id
        AND m.list_id = ANY(@segment_list_ids::bigint[]) AND m.status = 'subscribed'))
  AND (sqlc.narg('segment_engaged')::text IS NULL OR @segment_engaged_negated::bool <> EXISTS (
      SELECT 1 FROM sends d JOIN tracking_hits h ON h.send_id = d.id
      WHERE d.account_id = @account_id AND d.subscriber_id = s.id AND h.account_id = @account_id
        AND h.kind = sqlc.narg('segment_engaged')::text AND (h.kind = 'open' OR h.link_idx > 0)
        AND (sqlc.narg('segment_engaged_campaign_id')::bigint IS NULL OR (d.campaign_id = sqlc.narg('segment_engaged_campaign_id')::bigint
             AND h.campaign_id = sqlc.narg('segment_engaged_campaign_id')::bigint))
        AND (sqlc.narg('segment_engaged_days')::int IS NULL OR h.occurred_at >= now() - make_interval(days => sqlc.narg('segment_engaged_days')::int))
        AND (NOT @segment_engaged_people_only::bool OR NOT h.suspected_bot)))
  AND (sqlc.narg('segment_engaged')::text IS NULL OR NOT @segment_engaged_negated::bool OR EXISTS (
      SELECT 1 FROM sends d
      WHERE d.account_id = @account_id AND d.subscriber_id = s.id AND d.status = 'sent'
        AND (sqlc.narg('segment_engaged_campaign_id')::bigint IS NULL OR d.campaign_id = sqlc.narg('segment_engaged_campaign_id')::bigint)
        AND (sqlc.narg('segment_engaged_days')::int IS NULL OR d.sent_at >= now() - make_interval(days => sqlc.narg('segment_engaged_days')::int))))
  AND (sqlc.narg('segment_created_after')::timestamptz IS NULL OR s.created_at >= sqlc.narg('segment_created_after')::timestamptz)
  AND (sqlc.narg('segment_created_before')::timestamptz IS NULL OR s.created_at < sqlc.narg('segment_created_before')::timestamptz)
ORDER BY s.id;

-- name: CampaignBuildInsert :one
-- Queues the given subscribers of a building campaign (one window of the build),
-- re-checking that each is still confirmed and unsuppressed. The campaign row is
-- share-locked and must still be building by this builder: a cancel, a take-over or
-- the move to sending waits for this insert or makes it insert nothing, so no row
-- joins a campaign after its build ended. owned = 0 tells the builder to stop.
-- subscribers is UNIQUE (account_id, email_lower): one row per address.
-- An A/B campaign's row gets its variant here, from hashes of its job id (seed 0
-- for the test group, 1 for the variant), so any rebuild picks the same: the test
-- group of a 'test' campaign is the rows whose first hash falls below
-- ab_test_percent of 100; the others (the rest) get no variant yet and are due at
-- 'infinity', out of the claim's reach until the winner releases them
-- (SendReleaseRest, migration 00630).
-- A campaign with deliver_at_local queues each row due at that wall-clock time
-- in the recipient's zone, at or after @now (sendonce_local_due, migration
-- 00680); otherwise due at once (-infinity). An A/B test of mode 'test' and a
-- local time exclude each other (approval refuses the pair).
WITH owner AS (
    SELECT c.id, c.ab_mode, c.ab_variants, c.ab_test_percent, c.deliver_at_local,
           (SELECT a.time_zone FROM accounts a WHERE a.id = c.account_id) AS account_zone
    FROM campaigns c
    WHERE c.id = @campaign_id AND c.account_id = @account_id AND c.status = 'building'
      AND c.build_executor_id IS NOT DISTINCT FROM sqlc.narg('executor_id')::bigint
    FOR SHARE
), ins AS (
    INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id, variant, next_attempt_at)
    SELECT o.id, s.account_id, s.id, s.email, s.email_lower, h.job_id,
           CASE WHEN o.ab_mode IS NULL OR h.rest THEN NULL
                ELSE 1 + mod(mod(hashtextextended(h.job_id, 1), o.ab_variants) + o.ab_variants, o.ab_variants) END,
           CASE WHEN h.rest THEN 'infinity'::timestamptz
                WHEN o.deliver_at_local IS NULL THEN '-infinity'::timestamptz
                ELSE coalesce(sendonce_local_due(s.attributes->>'timezone', o.account_zone, o.deliver_at_local,
                                                 coalesce(sqlc.narg('now')::timestamptz, now())),
                              coalesce(sqlc.narg('now')::timestamptz, now())) END
    FROM owner o
    JOIN subscribers s ON s.account_id = @account_id AND s.id = ANY(@subscriber_ids::bigint[])
    CROSS JOIN LATERAL (SELECT 'campaign:' || o.id || ':' || s.id AS job_id) j
    CROSS JOIN LATERAL (SELECT j.job_id,
                               coalesce(o.ab_mode = 'test'
                                        AND mod(mod(hashtextextended(j.job_id, 0), 100) + 100, 100) >= o.ab_test_percent,
                                        false) AS rest) h
    WHERE s.status = 'confirmed'
      AND NOT EXISTS (SELECT 1 FROM suppressions x
                      WHERE x.account_id = s.account_id AND x.email_lower = s.email_lower)
    ORDER BY s.id
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM owner)::bigint AS owned, (SELECT count(*) FROM ins)::bigint AS inserted;

-- name: CampaignBuildDone :one
-- building → sending once the whole list is built, by its builder only. A campaign
-- that names no sender is pinned to the account's default sender of this moment, so
-- every send, test and rescue of it agrees on one sender (NULL: the environment's
-- provider) even if the default changes while it sends. The build's count of whom
-- it left out goes on the campaign, and the campaign.started event is written by the
-- same statement.
WITH started AS (
    UPDATE campaigns
    SET status = 'sending', build_executor_id = NULL,
        sender_id = coalesce(sender_id, (SELECT s.id FROM senders s
                                         WHERE s.account_id = campaigns.account_id AND s.is_default)),
        skipped_suppressed = @skipped_suppressed::bigint, skipped_unconfirmed = @skipped_unconfirmed::bigint,
        started_at = coalesce(sqlc.narg('now')::timestamptz, now()),
        updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
    WHERE campaigns.id = @id AND campaigns.status = 'building'
      AND campaigns.build_executor_id IS NOT DISTINCT FROM sqlc.narg('executor_id')::bigint
    RETURNING campaigns.id, campaigns.account_id, campaigns.name, campaigns.status
), started_event AS (
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT c.account_id, 'campaign.started', coalesce(sqlc.narg('now')::timestamptz, now()),
           jsonb_build_object('campaign_id', c.id, 'name', c.name, 'status', c.status)
    FROM started c
)
SELECT s.id FROM started s;

-- name: CampaignFail :one
-- An approved or building campaign that cannot start (its segment cannot be
-- evaluated, or its build ran past the limit) fails alone with its reason, so the
-- scheduler neither retries it nor stops at it. The statement changes the campaign
-- row and writes its event only, so its transaction stays short however large the
-- build: what the build had queued (never claimable, since only sending campaigns
-- are, so nothing of it was sent) is deleted afterwards in bounded batches
-- (SendDeleteFailed).
WITH failed AS (
    UPDATE campaigns
    SET status = 'failed', failed_reason = @reason::text, build_executor_id = NULL,
        finished_at = coalesce(sqlc.narg('now')::timestamptz, now()),
        updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
    WHERE campaigns.id = @id
      AND (campaigns.status = 'approved' OR (campaigns.status = 'building'
           AND campaigns.build_executor_id IS NOT DISTINCT FROM sqlc.narg('executor_id')::bigint))
    RETURNING campaigns.id, campaigns.account_id, campaigns.name, campaigns.status, campaigns.failed_reason
), failed_event AS (
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT f.account_id, 'campaign.failed', coalesce(sqlc.narg('now')::timestamptz, now()),
           jsonb_build_object('campaign_id', f.id, 'name', f.name, 'status', f.status, 'reason', f.failed_reason)
    FROM failed f
)
SELECT f.id, f.account_id FROM failed f;

-- name: CampaignTimeline :many
-- A campaign's history in at most max_buckets buckets of whole seconds from its
-- first event: settled sends by when they settled (sent_at for a sent row, else
-- the time of its last change); opens and clicks of people (hits not suspected of
-- being a scanner; the hidden honeypot link is no click) by when they came; and
-- recipients by their send's final feedback — hard and soft bounces, complaints,
-- unsubscribes — at its time (feedback_at). It reads the campaign's settled rows
-- (sends_campaign_status_idx covers exactly those), its rows with feedback and its
-- tracking hits (tracking_hits_campaign_idx); rows moved to campaign_send_archive
-- are counted there without a time, so they are not on the timeline.
WITH ev AS (
    SELECT coalesce(s.sent_at, s.updated_at) AS at, s.status AS what
    FROM sends s
    WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.status NOT IN ('queued', 'sending')
    UNION ALL
    SELECT s.feedback_at, s.feedback
    FROM sends s
    WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.feedback IS NOT NULL
      AND s.feedback_at IS NOT NULL
    UNION ALL
    SELECT h.occurred_at, h.kind
    FROM tracking_hits h
    WHERE h.account_id = @account_id AND h.campaign_id = @campaign_id AND NOT h.suspected_bot
      AND (h.kind = 'open' OR h.link_idx > 0)
), span AS (
    SELECT min(ev.at) AS t0,
           greatest(1, ceil(date_part('epoch', max(ev.at) - min(ev.at)) / sqlc.arg('max_buckets')::int + 1e-9))::bigint AS step
    FROM ev
)
SELECT date_bin(span.step * interval '1 second', ev.at, span.t0)::timestamptz AS bucket,
       span.step::bigint AS step_seconds,
       count(*) FILTER (WHERE ev.what = 'sent')::bigint        AS sent,
       count(*) FILTER (WHERE ev.what = 'failed')::bigint      AS failed,
       count(*) FILTER (WHERE ev.what = 'suppressed')::bigint  AS suppressed,
       count(*) FILTER (WHERE ev.what = 'cancelled')::bigint   AS cancelled,
       count(*) FILTER (WHERE ev.what = 'unknown')::bigint     AS unknown,
       count(*) FILTER (WHERE ev.what = 'open')::bigint        AS opens_people,
       count(*) FILTER (WHERE ev.what = 'click')::bigint       AS clicks_people,
       count(*) FILTER (WHERE ev.what = 'hard_bounce')::bigint AS hard_bounces,
       count(*) FILTER (WHERE ev.what = 'soft_bounce')::bigint AS soft_bounces,
       count(*) FILTER (WHERE ev.what = 'complaint')::bigint   AS complaints,
       count(*) FILTER (WHERE ev.what = 'unsubscribe')::bigint AS unsubscribes
FROM ev, span
GROUP BY 1, 2
ORDER BY 1;

-- name: CampaignFourEyesBlocked :one
-- Whether the account requires four eyes and the campaign was created by this very
-- actor: its approval then needs someone else. Read in the approval's transaction,
-- after its compare-and-set, so the refusal rolls the approval back. A campaign
-- whose creator is unknown (made before creators were recorded) is not blocked.
SELECT (a.four_eyes AND c.created_by_type IS NOT DISTINCT FROM sqlc.arg('actor_type')::text
        AND c.created_by_id IS NOT DISTINCT FROM sqlc.arg('actor_id')::bigint)::bool AS blocked
FROM campaigns c JOIN accounts a ON a.id = c.account_id
WHERE c.account_id = @account_id AND c.id = @id;

-- name: CampaignRetryFailedBegin :one
-- The compare-and-set that lets a sent campaign's failed recipients be tried once
-- more: 'sent' → 'sending', stamped, only if it was never stamped before. The
-- executors claim it again as any sending campaign; SendRequeueFailed re-queues
-- the rows in the same transaction, and the finalizer brings it back to 'sent'.
UPDATE campaigns SET status = 'sending', finished_at = NULL, failed_retried_at = now(), updated_at = now()
WHERE account_id = @account_id AND id = @id AND kind = 'campaign' AND status = 'sent'
  AND failed_retried_at IS NULL
RETURNING *;

-- name: SendRequeueFailed :one
-- A campaign's failed rows back to the queue, due now, with the same job id (the
-- provider's idempotency key and the Message-ID's seed) and their attempts and
-- route kept: the claim counts on from there, re-checks the suppressions, the
-- subscriber's status and its lists as for any row, and replays a row in doubt
-- only through its recorded route. Rows 'unknown' are not failed rows and stay:
-- the provider may have taken them.
-- The rows leave the campaign's kept failed count in the same statement.
WITH requeued AS (
    UPDATE sends s SET status = 'queued', next_attempt_at = now(), lease_until = NULL, last_error = NULL, updated_at = now()
    WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.status = 'failed'
    RETURNING s.id
), status_counted AS (
    UPDATE campaign_status_counts k SET n = k.n - (SELECT count(*) FROM requeued)
    WHERE k.campaign_id = @campaign_id AND k.account_id = @account_id AND k.status = 'failed'
)
SELECT count(*) FROM requeued;

-- name: CampaignDuplicate :one
-- A new draft with everything of the account's campaign @id but its sends and its
-- history: content (its type, Markdown or block design and layout too), template,
-- lists, segment, sender, policy and tracking switches; named "<name> (copy)" (cut
-- to fit). Its attachments are copied by CampaignAttachmentsCopy, and composed
-- content is composed again in its layout as it is now, in the same transaction.
INSERT INTO campaigns (account_id, name, subject, from_email, from_name, reply_to, html_template, text_template,
                       language, list_ids, ambiguous_policy, sender_id, segment_id, template_id,
                       track_clicks, track_opens, archive, content_type, markdown, blocks, layout_id)
SELECT c.account_id, left(c.name, 193) || ' (copy)', c.subject, c.from_email, c.from_name, c.reply_to, c.html_template,
       c.text_template, c.language, c.list_ids, c.ambiguous_policy, c.sender_id, c.segment_id, c.template_id,
       c.track_clicks, c.track_opens, c.archive, c.content_type, c.markdown, c.blocks, c.layout_id
FROM campaigns c
WHERE c.account_id = @account_id AND c.id = @id AND c.kind = 'campaign'
RETURNING *;

-- name: CampaignAttachmentsCopy :exec
-- The attachments of the account's campaign @from_id on campaign @to_id (same
-- stored blobs: an attachment is kept once per account by its hash).
INSERT INTO campaign_attachments (campaign_id, position, account_id, filename, content_type, content_id, sha256)
SELECT @to_id, a.position, a.account_id, a.filename, a.content_type, a.content_id, a.sha256
FROM campaign_attachments a
WHERE a.account_id = @account_id AND a.campaign_id = @from_id;

-- name: CampaignSetDeliverAtLocal :one
-- Sets or clears (NULL) a draft's local delivery time ("HH:MM"), in the
-- transaction of the create or edit that carries it.
UPDATE campaigns SET deliver_at_local = sqlc.narg('deliver_at_local')::text, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft' AND kind = 'campaign'
RETURNING *;

-- name: CampaignSetSendWindow :one
-- Sets or clears (NULL) a draft's sending window (internal/sendwindow, validated
-- there), in the transaction of the create or edit that carries it.
UPDATE campaigns SET send_window = sqlc.narg('send_window')::jsonb, updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft' AND kind = 'campaign'
RETURNING *;

-- name: CampaignSetPool :one
-- Names (or, with NULL, stops naming) one of the account's sender pools, in the
-- transaction of the create or edit that carries it; naming a pool leaves the
-- sender the campaign named (one or the other: campaigns_sender_or_pool).
UPDATE campaigns
SET pool_id = sqlc.narg('pool_id')::bigint,
    sender_id = CASE WHEN sqlc.narg('pool_id')::bigint IS NULL THEN sender_id END,
    updated_at = now()
WHERE account_id = @account_id AND id = @id AND status = 'draft' AND kind = 'campaign'
RETURNING *;

-- name: CampaignPoolSenderRules :many
-- The allowed_from rules of every sender of a campaign's pool, in pool order.
SELECT s.id, s.allowed_from FROM sender_pool_members m
JOIN senders s ON s.account_id = m.account_id AND s.id = m.sender_id
WHERE m.account_id = @account_id AND m.pool_id = @pool_id
ORDER BY m.position;
