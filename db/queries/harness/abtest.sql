-- Queries of `sendonce-harness chaos -ab` only (internal/chaos/abtest.go): the
-- test group the build's hashes give, and every row of the campaign with what
-- the hashes say it must carry.

-- name: ChaosABTestGroupSize :one
-- How many of the campaign's recipients (every confirmed subscriber of its
-- account) fall in the test group, computed from the subscribers with the
-- build's hash (seed 0 of the job id below ab_test_percent of 100), before and
-- independently of the build.
SELECT count(*)::bigint FROM subscribers s
JOIN campaigns c ON c.account_id = s.account_id
WHERE c.id = @campaign_id AND s.status = 'confirmed'
  AND mod(mod(hashtextextended('campaign:' || c.id || ':' || s.id, 0), 100) + 100, 100) < c.ab_test_percent;

-- name: ChaosABRows :many
-- Every send row of the campaign: its variant, whether the hashes put it in the
-- test group and which variant they give it, and whether it was sent before the
-- winner was chosen.
SELECT s.job_id, s.email, s.status, s.variant,
       (mod(mod(hashtextextended(s.job_id, 0), 100) + 100, 100) < c.ab_test_percent)::boolean AS in_test,
       (1 + mod(mod(hashtextextended(s.job_id, 1), c.ab_variants) + c.ab_variants, c.ab_variants))::smallint AS hashed_variant,
       coalesce(s.sent_at < c.ab_winner_at, false)::boolean AS sent_before_winner
FROM sends s
JOIN campaigns c ON c.id = s.campaign_id
WHERE s.campaign_id = @campaign_id
ORDER BY s.id;

-- name: ChaosABWinner :one
SELECT ab_winner FROM campaigns WHERE id = @id;
