-- name: AccountCreate :one
INSERT INTO accounts (name) VALUES (@name) RETURNING *;

-- name: AccountGetByID :one
SELECT * FROM accounts WHERE id = @id;

-- name: AccountGetFirstByName :one
SELECT * FROM accounts WHERE name = @name ORDER BY id LIMIT 1;

-- name: APIKeyCreate :one
INSERT INTO api_keys (account_id, name, prefix, token_hash, role, permissions, list_ids)
VALUES (@account_id, @name, @prefix, @token_hash, @role, sqlc.narg('permissions')::text[], sqlc.narg('list_ids')::bigint[])
RETURNING id, account_id, name, prefix, created_at;

-- name: APIKeyGetByPrefix :one
-- Looked up by the visible prefix; the caller compares token_hash in constant time.
-- touch_due says whether last_used_at is due to be written (APIKeyTouch), so a key in
-- steady use costs every request this one statement, not two.
-- A deleted account's keys are gone at once; a suspended one's are found and
-- refused (suspended: 403, not 401, so its owner knows why).
SELECT k.id, k.account_id, k.token_hash, k.role, k.permissions, k.list_ids, k.name,
       (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute')::bool AS touch_due,
       (a.suspended_at IS NOT NULL)::bool AS suspended
FROM api_keys k
JOIN accounts a ON a.id = k.account_id
WHERE k.prefix = @prefix AND k.revoked_at IS NULL AND a.deleted_at IS NULL;

-- name: APIKeyTouch :exec
-- last_used_at is advisory: written at most once a minute per key to spare the hot path.
UPDATE api_keys SET last_used_at = now()
WHERE id = @id AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');

-- The deletion of an account (`sendonce account delete`, and the purger of
-- accounts the operator deleted), in bounded batches: each statement deletes at
-- most @n of the account's rows of one large table in its own short transaction, so a large account goes without holding back every other
-- account's event readers (they wait below the oldest running transaction). The
-- account row goes last (AccountDelete), cascading what is left: small tables, and
-- whatever was written meanwhile. Nothing here is reachable from a request.

-- name: AccountPurgeEvents :execrows
DELETE FROM events WHERE id IN (SELECT e.id FROM events e WHERE e.account_id = @account_id LIMIT @n);

-- name: AccountPurgeEventBatches :execrows
DELETE FROM event_batches WHERE first_id IN (
    SELECT b.first_id FROM event_batches b WHERE b.account_id = @account_id LIMIT @n);

-- name: AccountPurgeEventDeliveries :execrows
DELETE FROM event_deliveries WHERE id IN (SELECT d.id FROM event_deliveries d WHERE d.account_id = @account_id LIMIT @n);

-- name: AccountPurgeTrackingHits :execrows
DELETE FROM tracking_hits WHERE id IN (SELECT h.id FROM tracking_hits h WHERE h.account_id = @account_id LIMIT @n);

-- name: AccountPurgeEngagementFirsts :execrows
DELETE FROM engagement_firsts
WHERE (campaign_id, send_id, kind, link_idx, people) IN (
    SELECT f.campaign_id, f.send_id, f.kind, f.link_idx, f.people FROM engagement_firsts f
    WHERE f.account_id = @account_id LIMIT @n);

-- name: AccountPurgeSends :execrows
DELETE FROM sends WHERE id IN (SELECT s.id FROM sends s WHERE s.account_id = @account_id LIMIT @n);

-- name: AccountPurgeMessages :execrows
DELETE FROM messages WHERE id IN (SELECT m.id FROM messages m WHERE m.account_id = @account_id LIMIT @n);

-- name: AccountPurgeSequenceLog :execrows
DELETE FROM sequence_step_log WHERE id IN (SELECT l.id FROM sequence_step_log l WHERE l.account_id = @account_id LIMIT @n);

-- name: AccountPurgeEnrollments :execrows
DELETE FROM sequence_enrollments WHERE id IN (SELECT x.id FROM sequence_enrollments x WHERE x.account_id = @account_id LIMIT @n);

-- name: AccountPurgeTrackEvents :execrows
DELETE FROM track_events d WHERE d.account_id = @account_id AND d.event_id IN (
    SELECT t.event_id FROM track_events t WHERE t.account_id = @account_id LIMIT @n);

-- name: AccountPurgeListMembers :execrows
DELETE FROM list_members WHERE (list_id, subscriber_id) IN (
    SELECT m.list_id, m.subscriber_id FROM list_members m WHERE m.account_id = @account_id LIMIT @n);

-- name: AccountPurgeSuppressions :execrows
DELETE FROM suppressions d WHERE d.account_id = @account_id AND d.email_lower IN (
    SELECT x.email_lower FROM suppressions x WHERE x.account_id = @account_id LIMIT @n);

-- name: AccountPurgeAuditLog :execrows
DELETE FROM audit_log WHERE id IN (SELECT l.id FROM audit_log l WHERE l.account_id = @account_id LIMIT @n);

-- name: AccountPurgeSubscribers :execrows
DELETE FROM subscribers WHERE id IN (SELECT s.id FROM subscribers s WHERE s.account_id = @account_id LIMIT @n);

-- name: AccountDelete :execrows
DELETE FROM accounts WHERE id = @id;

-- name: AccountUpdateSettings :one
-- PATCH /v1/account: each setting changes only when given.
UPDATE accounts SET
    unsubscribe_scope = coalesce(sqlc.narg('unsubscribe_scope')::text, unsubscribe_scope),
    four_eyes         = coalesce(sqlc.narg('four_eyes')::bool, four_eyes),
    time_zone         = coalesce(sqlc.narg('time_zone')::text, time_zone)
WHERE id = @account_id
RETURNING *;
