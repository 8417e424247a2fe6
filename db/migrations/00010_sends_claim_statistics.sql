-- The claim plan must walk sends_claim_idx in id order and stop at LIMIT (DESIGN.md
-- §4). Without joint statistics the planner multiplies the selectivities of
-- campaign_id and status as if independent, badly underestimates the queued rows of
-- the campaign being sent, and picks a bitmap scan that reads and sorts every queued
-- row of the campaign on each claim: quadratic over a large campaign.

-- +goose Up
CREATE STATISTICS sends_campaign_status_stats (mcv) ON campaign_id, status FROM sends;

-- +goose Down
DROP STATISTICS sends_campaign_status_stats;
