-- A campaign's sends in id order (GET /v1/campaigns/{id}/sends without a status,
-- the sends table of a campaign's page, paged by id): with no index that starts
-- with the campaign and goes on with the id, PostgreSQL walks the whole table's
-- primary key from the cursor and filters every other campaign's rows out, 7.7 s
-- p95 with 5,000,000 sends in the account (sendonce-harness largeaccount). The
-- unique (campaign_id, subscriber_id) and the status index do not give id order.
-- Its cost on the send path (a build's insert, a claim's and an acknowledgement's
-- update, which are not HOT) is measured in docs/experiments/sends-campaign-index.

-- +goose Up
CREATE INDEX sends_campaign_id_idx ON sends (campaign_id, id);

-- +goose Down
DROP INDEX sends_campaign_id_idx;
