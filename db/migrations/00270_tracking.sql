-- +goose Up
-- Click and open tracking, and the public web archive (docs/engagement.md).
-- track_clicks is on by default for campaigns: the links a campaign's HTML template
-- writes literally are rewritten to signed /c/{token} redirects. track_opens is off
-- by default (opens are noise: image proxies fetch every pixel). archive publishes
-- the campaign, rendered without recipient data, under /archive/{account public id}.
ALTER TABLE campaigns
    ADD COLUMN track_clicks boolean NOT NULL DEFAULT true,
    ADD COLUMN track_opens  boolean NOT NULL DEFAULT false,
    ADD COLUMN archive      boolean NOT NULL DEFAULT false;
-- Campaigns approved before tracking existed have no stored links: their messages
-- go out untracked, as they were approved.
UPDATE campaigns SET track_clicks = false WHERE status <> 'draft' OR kind <> 'campaign';

-- The archive lists an account's published campaigns, newest first.
CREATE INDEX campaigns_archive_idx ON campaigns (account_id, id) WHERE archive;

-- The original URLs of a campaign's tracked links, stored once per campaign (never
-- per recipient) when it is approved. A click token names the link by its index;
-- the redirect answers with the URL stored here and nothing the request carries.
-- Index 0 is never stored: it is the hidden honeypot link.
CREATE TABLE tracked_links (
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    idx         int    NOT NULL CHECK (idx BETWEEN 1 AND 1000),
    url         text   NOT NULL CHECK (length(url) <= 2048),
    PRIMARY KEY (campaign_id, idx)
);

-- Every click and open hit, bots included (suspected_bot says which, bot_reasons
-- why). Inserted in batches by the tracker's flusher, never on the request path.
-- send_id has no foreign key: send rows past retention are deleted, their
-- engagement stays.
CREATE TABLE tracking_hits (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    campaign_id   bigint      NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    send_id       bigint      NOT NULL,
    kind          text        NOT NULL CHECK (kind IN ('click', 'open')),
    -- The link's index for a click (0: the honeypot); 0 for an open.
    link_idx      int         NOT NULL DEFAULT 0,
    occurred_at   timestamptz NOT NULL,
    method        text        NOT NULL,
    user_agent    text        NOT NULL DEFAULT '' CHECK (length(user_agent) <= 512),
    suspected_bot boolean     NOT NULL,
    bot_reasons   text[]      NOT NULL DEFAULT '{}'
);
CREATE INDEX tracking_hits_campaign_idx ON tracking_hits (campaign_id, kind, link_idx);
CREATE INDEX tracking_hits_account_idx ON tracking_hits (account_id);

-- +goose Down
DROP TABLE tracking_hits;
DROP TABLE tracked_links;
DROP INDEX campaigns_archive_idx;
ALTER TABLE campaigns DROP COLUMN archive, DROP COLUMN track_opens, DROP COLUMN track_clicks;
