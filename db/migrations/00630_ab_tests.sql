-- A/B tests of a campaign (docs/ab-tests.md). A campaign may carry 2-5 variants,
-- each overriding some of its content; ab_mode says how the audience meets them:
-- 'split' sends every recipient one variant, 'test' sends a test group of
-- ab_test_percent % first, waits ab_wait_seconds from the start, then the winner
-- (ab_winner, set once by a compare-and-set) goes to the rest.
--
-- The variant is a column of the one send row of a recipient (sends.variant, never
-- a second row), chosen by the build from a hash of the row's job id, so a rebuild
-- picks the same. A row of the rest of a test is built with variant NULL and due
-- at 'infinity': the claim asks only for rows due by now, and sends_claim_idx
-- orders by next_attempt_at, so the claim's index scan stops before them and never
-- walks over them (the rule of DESIGN.md §4 about rows left at the head of the
-- index). Once the winner is chosen the rows are released in bounded batches:
-- variant = winner and due at once (SendReleaseRest). The column is in no index,
-- so a claim or an acknowledgement writes no more index entries than before.

-- +goose Up
ALTER TABLE campaigns
    ADD COLUMN ab_mode         text CHECK (ab_mode IN ('split', 'test')),
    ADD COLUMN ab_variants     smallint CHECK (ab_variants BETWEEN 2 AND 5),
    ADD COLUMN ab_test_percent smallint CHECK (ab_test_percent BETWEEN 1 AND 50),
    ADD COLUMN ab_wait_seconds integer CHECK (ab_wait_seconds BETWEEN 60 AND 2592000),
    ADD COLUMN ab_metric       text CHECK (ab_metric IN ('clicks', 'opens', 'manual')),
    ADD COLUMN ab_winner       smallint,
    ADD COLUMN ab_winner_at    timestamptz,
    ADD COLUMN ab_winner_by    text CHECK (ab_winner_by IN ('automatic', 'manual')),
    ADD CONSTRAINT campaigns_ab_shape CHECK (
        (ab_mode IS NULL AND ab_variants IS NULL AND ab_winner IS NULL)
        OR (ab_mode = 'split' AND ab_variants IS NOT NULL AND ab_test_percent IS NULL AND ab_winner IS NULL)
        OR (ab_mode = 'test' AND ab_variants IS NOT NULL AND ab_test_percent IS NOT NULL
            AND ab_wait_seconds IS NOT NULL AND ab_metric IS NOT NULL
            AND (ab_winner IS NULL OR ab_winner BETWEEN 1 AND ab_variants)));

CREATE TABLE campaign_variants (
    account_id    bigint   NOT NULL,
    campaign_id   bigint   NOT NULL,
    idx           smallint NOT NULL CHECK (idx BETWEEN 1 AND 5),
    subject       text,
    from_name     text,
    html_template text,
    text_template text,
    template_id   bigint REFERENCES templates (id) ON DELETE SET NULL,
    PRIMARY KEY (campaign_id, idx),
    FOREIGN KEY (account_id, campaign_id) REFERENCES campaigns (account_id, id) ON DELETE CASCADE
);

ALTER TABLE sends ADD COLUMN variant smallint CHECK (variant BETWEEN 1 AND 5);

-- +goose Down
ALTER TABLE sends DROP COLUMN variant;
DROP TABLE campaign_variants;
ALTER TABLE campaigns DROP CONSTRAINT campaigns_ab_shape,
    DROP COLUMN ab_mode, DROP COLUMN ab_variants, DROP COLUMN ab_test_percent, DROP COLUMN ab_wait_seconds,
    DROP COLUMN ab_metric, DROP COLUMN ab_winner, DROP COLUMN ab_winner_at, DROP COLUMN ab_winner_by;
