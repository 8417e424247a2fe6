-- +goose Up
-- A campaign page lists the campaign's own lifecycle events (campaign.approved,
-- started, paused, resumed, cancelled, sent, failed: a handful per campaign). A
-- partial index holds exactly those, by account and campaign: the per-recipient
-- events (one per message, the bulk of the table) are not in it, so writing them
-- costs only the predicate's check. The campaign id is indexed as the text the
-- event holds, so no event can ever fail to be indexed.
CREATE INDEX events_campaign_idx ON events (account_id, (data ->> 'campaign_id'), id) WHERE type LIKE 'campaign.%';

-- +goose Down
DROP INDEX events_campaign_idx;
