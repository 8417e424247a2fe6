-- +goose Up
-- Whether one subscriber is in a segment now: the segment's filter for one row, the
-- one definition the sequences' per-subscriber checks call. The queries over a set
-- of subscribers (the campaign build, the preview) keep the same predicate inline,
-- over their parameters, so the planner can use the attributes index for it; a test
-- holds their text equal (internal/segment). A segment of another account, or none,
-- matches nobody.
-- +goose StatementBegin
CREATE FUNCTION subscriber_in_segment(p_account_id bigint, p_segment_id bigint, p_subscriber_id bigint)
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

-- +goose Down
DROP FUNCTION subscriber_in_segment(bigint, bigint, bigint);
