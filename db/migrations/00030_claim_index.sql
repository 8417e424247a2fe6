-- The claim index, ordered by due time then id. Ordered by id alone, the claim could
-- also be served by the primary key plus a filter, and the planner takes that path
-- whenever its statistics say most of the campaign is still queued (right after the
-- build, before autovacuum re-analyzes): every claim then walks over all the rows
-- already claimed, and the drain goes quadratic (DESIGN.md §4; measured 37 ms instead
-- of 1.7 ms to pick 500 rows half way through 100,000). No other index yields
-- (next_attempt_at, id) order, so this one is the only cheap path. Fresh rows are due
-- at -infinity and go out in id order; a retried row goes out once due, after the
-- fresh rows of its campaign (its backoff is a minimum); rows not yet due sit at the
-- end of the index range, where no claim walks over them.

-- +goose Up
DROP INDEX sends_claim_idx;
CREATE INDEX sends_claim_idx ON sends (campaign_id, next_attempt_at, id) WHERE status = 'queued';

-- +goose Down
DROP INDEX sends_claim_idx;
CREATE INDEX sends_claim_idx ON sends (campaign_id, id) WHERE status = 'queued';
