-- The write cost of sends_campaign_id_idx (campaign_id, id) on the send path, on the
-- database `sendonce-harness largeaccount -keep` seeded: a campaign of 100,000
-- recipients built (one INSERT … SELECT, as CampaignBuildInsert), claimed (queued →
-- sending, attempts + 1, a lease: what SendClaimBatch sets) and acknowledged
-- (sending → sent), each statement timed, all rolled back. Run it with the index
-- and without it (DROP INDEX sends_campaign_id_idx) and compare:
--   psql "$SENDONCE_DATABASE_URL" -f write-cost.sql
\timing on
BEGIN;
INSERT INTO campaigns (account_id, name, subject, from_email, text_template, status, started_at)
SELECT id, 'write cost', 'x', 'news@example.com', 'x', 'sending', now() FROM accounts WHERE name = 'large account';
-- build
INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id)
SELECT c.id, c.account_id, s.id, s.email, s.email_lower, 'campaign:' || c.id || ':' || s.id
FROM campaigns c JOIN subscribers s ON s.account_id = c.account_id
WHERE c.name = 'write cost' AND s.id <= (SELECT min(id) + 99999 FROM subscribers WHERE account_id = c.account_id);
-- claim
UPDATE sends SET status = 'sending', attempts = attempts + 1, lease_until = now() + interval '1 minute', via_provider = 'http', via_idempotent = true
WHERE campaign_id = (SELECT id FROM campaigns WHERE name = 'write cost') AND status = 'queued';
-- acknowledge
UPDATE sends SET status = 'sent', sent_at = now(), lease_until = NULL
WHERE campaign_id = (SELECT id FROM campaigns WHERE name = 'write cost') AND status = 'sending';
ROLLBACK;
