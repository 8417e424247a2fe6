-- The write cost of list_members_subscribed_idx (account_id, list_id, subscriber_id)
-- WHERE status = 'subscribed' (migration 00820), on the database
-- `sendonce-harness largeaccount` seeded (1,000,000 subscribers, 1,000,000
-- memberships): 100,000 memberships written to a new list as an import into a list
-- or a bulk add writes them (INSERT … SELECT … ON CONFLICT DO NOTHING, subscribed),
-- each changed to unsubscribed as an opt-out from the list does, back to subscribed
-- (a confirmation), then deleted (as ListMembersPurge), each statement timed, all
-- rolled back. Run it with the index and without it (DROP INDEX
-- list_members_subscribed_idx) and compare:
--   psql "$SENDONCE_DATABASE_URL" -f write-cost.sql
\timing on
BEGIN;
INSERT INTO lists (account_id, name) SELECT id, 'write cost' FROM accounts WHERE name = 'large account';
-- add (subscribed: one entry in the index each)
INSERT INTO list_members (list_id, subscriber_id, account_id)
SELECT l.id, s.id, s.account_id
FROM lists l JOIN subscribers s ON s.account_id = l.account_id
WHERE l.name = 'write cost' AND s.id <= (SELECT min(id) + 99999 FROM subscribers WHERE account_id = l.account_id)
ON CONFLICT DO NOTHING;
-- unsubscribe (the new row versions are not in the index)
UPDATE list_members SET status = 'unsubscribed', status_at = now()
WHERE list_id = (SELECT id FROM lists WHERE name = 'write cost') AND status = 'subscribed';
-- subscribe again (one entry each)
UPDATE list_members SET status = 'subscribed', status_at = now()
WHERE list_id = (SELECT id FROM lists WHERE name = 'write cost') AND status = 'unsubscribed';
-- delete
DELETE FROM list_members WHERE list_id = (SELECT id FROM lists WHERE name = 'write cost');
ROLLBACK;
