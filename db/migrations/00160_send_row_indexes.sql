-- What a status change of a send row costs. Every claim (queued → sending) and
-- every acknowledgement (sending → sent) changes status, which partial indexes
-- depend on, so neither can be a HOT update: each writes a new entry into every
-- index of sends whose predicate the new row meets. This migration takes out the
-- entries that bought nothing, keeping every guarantee:
--
-- * job_id. The UNIQUE index on it was the widest index of sends (text keys in no
--   useful order) and took a new entry at every status change: a fifth of the
--   CPU of an update. A campaign's job id is made of its (campaign_id,
--   subscriber_id), already UNIQUE, so the CHECK below states that form and the
--   UNIQUE index keeps only the other job ids (transactional messages'
--   'message:<account>:<key>'), which no campaign row enters. Together they keep
--   UNIQUE(job_id) over the whole table: two campaign job ids that are equal
--   name one (campaign_id, subscriber_id); two others meet in the index; one of
--   each cannot be equal. A look-up by a campaign job id goes through
--   sends_campaign_id_subscriber_id_key, by any other through sends_job_id_key
--   (the query says job_id NOT LIKE 'campaign:%' so the planner may use it).
-- * sends_campaign_status_idx (campaign_id, status, id) covered every row; it now
--   covers the settled ones. Queued rows of a campaign are in sends_claim_idx and
--   rows in flight in sends_lease_idx, so a build, a claim and a release write no
--   entry into it; only the acknowledgement that settles a row does.
-- * The build's foreign keys: one composite key (account_id, campaign_id) →
--   campaigns (account_id, id) replaces the two single ones, so each inserted row
--   pays one key check instead of two. It keeps both guarantees (the campaign
--   exists; the account exists, as the campaign's own key to accounts says) and
--   adds one: a send row belongs to its campaign's account. Deleting an account
--   or a campaign still deletes its send rows (through the campaign).

-- +goose Up
ALTER TABLE sends DROP CONSTRAINT sends_job_id_key;
ALTER TABLE sends ADD CONSTRAINT sends_job_id_form
    CHECK (job_id NOT LIKE 'campaign:%' OR job_id = 'campaign:' || campaign_id || ':' || subscriber_id);
CREATE UNIQUE INDEX sends_job_id_key ON sends (job_id) WHERE job_id NOT LIKE 'campaign:%';

DROP INDEX sends_campaign_status_idx;
CREATE INDEX sends_campaign_status_idx ON sends (campaign_id, status, id) WHERE status NOT IN ('queued', 'sending');

DROP INDEX campaigns_account_id_idx;
CREATE UNIQUE INDEX campaigns_account_id_idx ON campaigns (account_id, id);
ALTER TABLE sends DROP CONSTRAINT sends_campaign_id_fkey;
ALTER TABLE sends DROP CONSTRAINT sends_account_id_fkey;
ALTER TABLE sends ADD CONSTRAINT sends_campaign_fkey
    FOREIGN KEY (account_id, campaign_id) REFERENCES campaigns (account_id, id) ON DELETE CASCADE;

-- +goose Down
ALTER TABLE sends DROP CONSTRAINT sends_campaign_fkey;
ALTER TABLE sends ADD CONSTRAINT sends_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
ALTER TABLE sends ADD CONSTRAINT sends_campaign_id_fkey FOREIGN KEY (campaign_id) REFERENCES campaigns (id) ON DELETE CASCADE;
DROP INDEX campaigns_account_id_idx;
CREATE INDEX campaigns_account_id_idx ON campaigns (account_id, id);

DROP INDEX sends_campaign_status_idx;
CREATE INDEX sends_campaign_status_idx ON sends (campaign_id, status, id);

DROP INDEX sends_job_id_key;
ALTER TABLE sends DROP CONSTRAINT sends_job_id_form;
ALTER TABLE sends ADD CONSTRAINT sends_job_id_key UNIQUE (job_id);
