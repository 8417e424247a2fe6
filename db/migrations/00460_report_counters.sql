-- Kept counters for campaign reports and account analytics (docs/reports.md). Send
-- retention deletes sends rows; these stay, so a report reads the same after it.
-- Each counter is incremented by the statement whose change it counts, in its
-- transaction: the acknowledgement (sent), the feedback webhook (bounces,
-- complaints, provider unsubscribes), the opt-out pages (unsubscribes), the tracking
-- flusher's batch (opens, clicks). No trigger: the send path pays one grouped upsert
-- per acknowledgement, never a statement per row.

-- +goose Up
-- Where a send's feedback came from: 'provider' (a webhook), 'one_click' (the
-- List-Unsubscribe link) or 'preferences' (the preference page). NULL before.
ALTER TABLE sends ADD COLUMN feedback_source text
    CHECK (feedback_source IN ('provider', 'one_click', 'preferences'));

-- Per campaign (any kind: a message stream and a sequence step count too) and
-- recipient domain (the part after the address's last '@', lower case; '' when the
-- send row was gone before its engagement arrived). Bounce, complaint and
-- unsubscribe columns count recipients by their send's final feedback (a soft bounce
-- that a hard bounce replaces moves from one column to the other). opens and clicks
-- count hits, opened and clicked recipients; the _people columns leave out hits
-- suspected of being a scanner. Clicks on the hidden honeypot link are not clicks.
CREATE TABLE campaign_counts (
    campaign_id       bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    account_id        bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    domain            text   NOT NULL,
    sent              bigint NOT NULL DEFAULT 0,
    hard_bounces      bigint NOT NULL DEFAULT 0,
    soft_bounces      bigint NOT NULL DEFAULT 0,
    complaints        bigint NOT NULL DEFAULT 0,
    unsub_one_click   bigint NOT NULL DEFAULT 0,
    unsub_preferences bigint NOT NULL DEFAULT 0,
    unsub_provider    bigint NOT NULL DEFAULT 0,
    opens             bigint NOT NULL DEFAULT 0,
    opens_people      bigint NOT NULL DEFAULT 0,
    opened            bigint NOT NULL DEFAULT 0,
    opened_people     bigint NOT NULL DEFAULT 0,
    clicks            bigint NOT NULL DEFAULT 0,
    clicks_people     bigint NOT NULL DEFAULT 0,
    clicked           bigint NOT NULL DEFAULT 0,
    clicked_people    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, domain)
);
-- The report's top domains by sent.
CREATE INDEX campaign_counts_sent_idx ON campaign_counts (campaign_id, sent DESC);

-- Per tracked link of a campaign (its index in tracked_links or message_links).
CREATE TABLE campaign_link_counts (
    campaign_id    bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    account_id     bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    link_idx       int    NOT NULL,
    clicks         bigint NOT NULL DEFAULT 0,
    clicks_people  bigint NOT NULL DEFAULT 0,
    clicked        bigint NOT NULL DEFAULT 0,
    clicked_people bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (campaign_id, link_idx)
);

-- Per account, UTC day and campaign kind ('campaign', 'messages', 'sequence'): what
-- happened that day. Unlike campaign_counts these count events as they came (a soft
-- bounce one day and a hard bounce of the same send the next count once each day);
-- opened_people and clicked_people count recipients on the day of their first such
-- hit not suspected of being a scanner.
CREATE TABLE account_day_counts (
    account_id     bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    day            date   NOT NULL,
    kind           text   NOT NULL,
    sent           bigint NOT NULL DEFAULT 0,
    hard_bounces   bigint NOT NULL DEFAULT 0,
    soft_bounces   bigint NOT NULL DEFAULT 0,
    complaints     bigint NOT NULL DEFAULT 0,
    unsubscribes   bigint NOT NULL DEFAULT 0,
    opened_people  bigint NOT NULL DEFAULT 0,
    clicked_people bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, day, kind)
);

-- Which recipients (sends) already engaged, so unique counts stay exact across
-- flushes and replicas: the flusher's insert of a key that exists does nothing, and
-- only the keys it inserted count as new recipients. link_idx 0 is the campaign as
-- a whole (any open, any click); above 0, one link. people: the key of hits not
-- suspected of being a scanner.
CREATE TABLE engagement_firsts (
    campaign_id bigint  NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    account_id  bigint  NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    send_id     bigint  NOT NULL,
    kind        text    NOT NULL,
    link_idx    int     NOT NULL,
    people      boolean NOT NULL,
    PRIMARY KEY (campaign_id, send_id, kind, link_idx, people)
);
-- An account's deletion purges them in batches (AccountPurgeEngagementFirsts).
CREATE INDEX engagement_firsts_account_idx ON engagement_firsts (account_id);

-- +goose Down
DROP TABLE engagement_firsts;
DROP TABLE account_day_counts;
DROP TABLE campaign_link_counts;
DROP TABLE campaign_counts;
ALTER TABLE sends DROP COLUMN feedback_source;
