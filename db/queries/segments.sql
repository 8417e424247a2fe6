-- Segments: saved subscriber filters. The jsonpath predicate always travels as a
-- bound parameter cast to jsonpath, so PostgreSQL parses it as a jsonpath (a syntax
-- error is the tenant's 422) and it can never become SQL. The filter is written
-- out in SegmentPreviewCount, SegmentPreviewSample, their InLists forms and
-- CampaignAudiencePage (the build) alike, and per subscriber in subscriber_in_segment (00580).

-- name: SegmentCreate :one
INSERT INTO segments (account_id, name, match, statuses, list_ids, created_after, created_before,
                      engaged_kind, engaged_negated, engaged_campaign_id, engaged_days, engaged_people_only)
VALUES (@account_id, @name, sqlc.narg('match')::text::jsonpath, @statuses::text[], @list_ids::bigint[],
        sqlc.narg('created_after')::timestamptz, sqlc.narg('created_before')::timestamptz,
        sqlc.narg('engaged_kind')::text, @engaged_negated::bool, sqlc.narg('engaged_campaign_id')::bigint,
        sqlc.narg('engaged_days')::int, @engaged_people_only::bool)
RETURNING id, name, coalesce(match::text, '')::text AS match, statuses, list_ids, created_after, created_before,
       engaged_kind, engaged_negated, engaged_campaign_id, engaged_days, engaged_people_only, created_at, updated_at;

-- name: SegmentGet :one
SELECT id, name, coalesce(match::text, '')::text AS match, statuses, list_ids, created_after, created_before,
       engaged_kind, engaged_negated, engaged_campaign_id, engaged_days, engaged_people_only, created_at, updated_at
FROM segments
WHERE account_id = @account_id AND id = @id;

-- name: SegmentList :many
SELECT id, name, coalesce(match::text, '')::text AS match, statuses, list_ids, created_after, created_before,
       engaged_kind, engaged_negated, engaged_campaign_id, engaged_days, engaged_people_only, created_at, updated_at
FROM segments
WHERE account_id = @account_id AND id > @after_id
  -- name_contains: '' for every segment, else those whose name holds it (any case).
  AND (@name_contains::text = '' OR strpos(lower(name), lower(@name_contains::text)) > 0)
ORDER BY id
LIMIT @lim;

-- name: SegmentUpdate :one
-- The whole definition is replaced: a segment is small, and a full PUT-like body
-- makes "clear this filter" expressible without a sentinel.
UPDATE segments SET
    name           = @name,
    match          = sqlc.narg('match')::text::jsonpath,
    statuses       = @statuses::text[],
    list_ids       = @list_ids::bigint[],
    created_after  = sqlc.narg('created_after')::timestamptz,
    created_before = sqlc.narg('created_before')::timestamptz,
    engaged_kind        = sqlc.narg('engaged_kind')::text,
    engaged_negated     = @engaged_negated::bool,
    engaged_campaign_id = sqlc.narg('engaged_campaign_id')::bigint,
    engaged_days        = sqlc.narg('engaged_days')::int,
    engaged_people_only = @engaged_people_only::bool,
    updated_at     = now()
WHERE account_id = @account_id AND id = @id
RETURNING id, name, coalesce(match::text, '')::text AS match, statuses, list_ids, created_after, created_before,
       engaged_kind, engaged_negated, engaged_campaign_id, engaged_days, engaged_people_only, created_at, updated_at;

-- name: SegmentDelete :execrows
DELETE FROM segments WHERE account_id = @account_id AND id = @id;

-- name: SegmentMatchCanonical :one
-- The predicate as PostgreSQL prints it back: every key, string and variable
-- quoted the same way, which the variable check scans (a syntax error is the
-- tenant's 422).
SELECT CAST(CAST(sqlc.arg(match)::text AS jsonpath) AS text) AS canonical;

-- name: SegmentIDOwned :one
-- Whether id is one of the account's segments: a campaign may only use its own.
SELECT EXISTS (SELECT 1 FROM segments WHERE account_id = @account_id AND id = @id);

-- name: SegmentCampaignOwned :one
-- Whether id is one of the account's campaigns: an engagement condition may only
-- name the account's own.
SELECT EXISTS (SELECT 1 FROM campaigns WHERE account_id = @account_id AND id = @id);

-- name: SegmentSetTimeout :exec
-- Bounds every later statement of the current transaction (SET LOCAL), so a
-- pathological predicate is cancelled instead of holding a backend.
SELECT set_config('statement_timeout', @ms::text, true);

-- name: SegmentForceCustomPlan :exec
-- A cached generic plan cannot see that the predicate is set, so it would never use
-- the attributes index; planning with the actual values can.
SELECT set_config('plan_cache_mode', 'force_custom_plan', true);

-- name: SegmentSetNoJIT :exec
-- No JIT compilation for the rest of the current transaction (SET LOCAL): a preview
-- over a large account is costed far above jit_above_cost, and compiling its
-- expressions took longer than the count it served (100 ms of 500 ms at 1,000,000
-- subscribers, idle; more under load), for a statement run once.
SELECT set_config('jit', 'off', true);

-- name: SegmentPreviewCount :one
-- How many subscribers the filter selects, counted up to @bound (the preview
-- counts them all, the members listing's total stops at subscriber.CountBound).
-- @@ (not jsonb_path_match) because the GIN jsonb_path_ops index serves the operator.
-- Errors inside the predicate (a string compared with a number) are silent under
-- @@: such a subscriber simply does not match.
SELECT count(*) FROM (SELECT 1 FROM subscribers s
WHERE s.account_id = @account_id
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
LIMIT @bound) x;

-- name: SegmentPreviewSample :many
-- The first @lim subscribers the filter selects after @after_id, in id order: the
-- preview's sample (from 0) and a page of a segment's members (keyset).
SELECT s.* FROM subscribers s
WHERE s.account_id = @account_id AND s.id > @after_id
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
ORDER BY s.id
LIMIT @lim;

-- The same two for a filter that names lists, with the lists as a condition of their
-- own (@in_list_ids); the service chooses, and runs these with @segment_list_ids
-- empty. Inside the predicate the list test is `cardinality(...) = 0 OR EXISTS (...)`,
-- which PostgreSQL keeps as a subplan run once for every subscriber of the account:
-- it pulls an EXISTS up into a join only where it is a term of the WHERE's top-level
-- AND, and it does so before it folds constants, so even a known non-empty list
-- leaves it a subplan. Here the EXISTS is such a term: the plan can start from the
-- lists' subscribed memberships (list_members_subscribed_idx, index-only) or hash
-- them against the subscribers, and the predicate's own list test, given no list,
-- folds away in the custom plan (segment.Bound). The membership test is the
-- predicate's, word for word (TestListConditionIsThePredicates).

-- name: SegmentPreviewCountInLists :one
SELECT count(*) FROM (SELECT 1 FROM subscribers s
WHERE s.account_id = @account_id
  AND EXISTS (
      SELECT 1 FROM list_members m
      WHERE m.subscriber_id = s.id AND m.account_id = @account_id
        AND m.list_id = ANY(@in_list_ids::bigint[]) AND m.status = 'subscribed')
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
LIMIT @bound) x;

-- name: SegmentPreviewSampleInLists :many
SELECT s.* FROM subscribers s
WHERE s.account_id = @account_id AND s.id > @after_id
  AND EXISTS (
      SELECT 1 FROM list_members m
      WHERE m.subscriber_id = s.id AND m.account_id = @account_id
        AND m.list_id = ANY(@in_list_ids::bigint[]) AND m.status = 'subscribed')
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
ORDER BY s.id
LIMIT @lim;
