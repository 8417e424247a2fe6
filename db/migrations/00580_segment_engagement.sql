-- +goose Up
-- Engagement in segments (docs/segments.md): a segment may also ask whether a person
-- opened or clicked one campaign of the account (engaged_campaign_id), or any
-- campaign within the last engaged_days days, counting only hits not suspected of
-- being a scanner (engaged_people_only) or any; negated, it asks for the people who
-- were sent that campaign (any campaign within the days) and did not. engaged_kind
-- is the tracking hit's kind ('open', 'click'); NULL: no engagement condition.
-- engaged_campaign_id has no foreign key, like tracking_hits: a campaign that is
-- gone has no sends, so its condition matches nobody.
ALTER TABLE segments
    ADD COLUMN engaged_kind        text    CHECK (engaged_kind IN ('open', 'click')),
    ADD COLUMN engaged_negated     boolean NOT NULL DEFAULT false,
    ADD COLUMN engaged_campaign_id bigint,
    ADD COLUMN engaged_days        int     CHECK (engaged_days BETWEEN 1 AND 365),
    ADD COLUMN engaged_people_only boolean NOT NULL DEFAULT true,
    ADD CONSTRAINT segments_engaged_one_scope CHECK (
        engaged_kind IS NULL OR (engaged_campaign_id IS NULL) <> (engaged_days IS NULL));

-- No index on sends (subscriber_id): every send row version would enter it (a
-- status change is never a HOT update, migration 00160), a cost on every message
-- for a check the set forms (the build, the preview) make by hashing the account's
-- sends once. The per-subscriber form below finds "campaign X" through the
-- (campaign_id, subscriber_id) key; "any message within N days" reads the account's
-- sends for each check (the sequences' segment sweep: docs/api.md says so).

-- The one per-subscriber definition of a segment's filter, now with the engagement
-- condition; the set forms (the campaign build, the preview) keep the same
-- predicate inline over their parameters (a test holds their text equal, and this
-- function and the preview to the same subscribers).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION subscriber_in_segment(p_account_id bigint, p_segment_id bigint, p_subscriber_id bigint)
RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM subscribers s JOIN segments g ON g.account_id = s.account_id AND g.id = p_segment_id
        WHERE s.account_id = p_account_id AND s.id = p_subscriber_id
          AND (g.match IS NULL OR s.attributes @@ g.match)
          AND (cardinality(g.statuses) = 0 OR s.status = ANY(g.statuses))
          AND (cardinality(g.list_ids) = 0 OR EXISTS (
              SELECT 1 FROM list_members m
              WHERE m.subscriber_id = s.id AND m.account_id = s.account_id
                AND m.list_id = ANY(g.list_ids) AND m.status = 'subscribed'))
          AND (g.engaged_kind IS NULL OR g.engaged_negated <> EXISTS (
              SELECT 1 FROM sends d JOIN tracking_hits h ON h.send_id = d.id
              WHERE d.account_id = s.account_id AND d.subscriber_id = s.id AND h.account_id = s.account_id
                AND h.kind = g.engaged_kind AND (h.kind = 'open' OR h.link_idx > 0)
                AND (g.engaged_campaign_id IS NULL OR (d.campaign_id = g.engaged_campaign_id AND h.campaign_id = g.engaged_campaign_id))
                AND (g.engaged_days IS NULL OR h.occurred_at >= now() - make_interval(days => g.engaged_days))
                AND (NOT g.engaged_people_only OR NOT h.suspected_bot)))
          AND (g.engaged_kind IS NULL OR NOT g.engaged_negated OR EXISTS (
              SELECT 1 FROM sends d
              WHERE d.account_id = s.account_id AND d.subscriber_id = s.id AND d.status = 'sent'
                AND (g.engaged_campaign_id IS NULL OR d.campaign_id = g.engaged_campaign_id)
                AND (g.engaged_days IS NULL OR d.sent_at >= now() - make_interval(days => g.engaged_days))))
          AND (g.created_after IS NULL OR s.created_at >= g.created_after)
          AND (g.created_before IS NULL OR s.created_at < g.created_before))
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION subscriber_in_segment(p_account_id bigint, p_segment_id bigint, p_subscriber_id bigint)
RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM subscribers s JOIN segments g ON g.account_id = s.account_id AND g.id = p_segment_id
        WHERE s.account_id = p_account_id AND s.id = p_subscriber_id
          AND (g.match IS NULL OR s.attributes @@ g.match)
          AND (cardinality(g.statuses) = 0 OR s.status = ANY(g.statuses))
          AND (cardinality(g.list_ids) = 0 OR EXISTS (
              SELECT 1 FROM list_members m
              WHERE m.subscriber_id = s.id AND m.account_id = s.account_id
                AND m.list_id = ANY(g.list_ids) AND m.status = 'subscribed'))
          AND (g.created_after IS NULL OR s.created_at >= g.created_after)
          AND (g.created_before IS NULL OR s.created_at < g.created_before))
$$;
-- +goose StatementEnd
ALTER TABLE segments DROP CONSTRAINT segments_engaged_one_scope,
    DROP COLUMN engaged_people_only, DROP COLUMN engaged_days, DROP COLUMN engaged_campaign_id,
    DROP COLUMN engaged_negated, DROP COLUMN engaged_kind;
