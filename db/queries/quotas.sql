-- The quotas the operator sets on an account (internal/quota), checked where the
-- write happens. A size-like quota (subscribers, senders) is checked in the
-- writing transaction after QuotaLock: writers of one account under a quota then
-- take their turn, and each counts what the ones before it committed, so the
-- quota is never overshot. The count's cost is bounded by the quota itself.
-- Accounts without a quota take no lock and count nothing.

-- name: QuotaLimits :one
SELECT quota_subscribers, quota_senders, quota_messages_per_day FROM accounts WHERE id = @account_id;

-- name: QuotaLock :exec
-- A transaction-scoped lock per (account, quota); a separate statement, so the
-- count that follows reads a snapshot taken after the lock was granted.
SELECT pg_advisory_xact_lock(hashtextextended('sendonce.quota.' || @quota::text || '.' || @account_id::bigint, 0));

-- name: QuotaSubscribersUsed :one
SELECT count(*)::bigint FROM subscribers WHERE account_id = @account_id;

-- name: QuotaSendersUsed :one
SELECT count(*)::bigint FROM senders WHERE account_id = @account_id;

-- name: QuotaMessagesTake :one
-- Takes one message of the account's UTC day from its messages_per_day quota, in
-- the transaction that accepts the message: the first of the day inserts the
-- row, the next raise it while it is below @lim. Concurrent takers of one account
-- queue on the row (ON CONFLICT DO UPDATE locks it, and a waiter re-checks the
-- WHERE against the committed count), so no more than @lim are ever accepted in a
-- day; a transaction that rolls back gives its message back. No row: the day's
-- quota is used up (@lim must be at least 1: the insert takes the first).
INSERT INTO account_message_counts AS c (account_id, day, messages)
SELECT @account_id::bigint, timezone('UTC', @now::timestamptz)::date, 1
ON CONFLICT (account_id, day) DO UPDATE SET messages = c.messages + 1
WHERE c.messages < @lim::bigint
RETURNING c.messages;

-- name: QuotaMessagesUsed :one
-- What the account accepted on the UTC day of @now (0 before its first).
SELECT coalesce((SELECT messages FROM account_message_counts
                 WHERE account_id = @account_id AND day = timezone('UTC', @now::timestamptz)::date), 0)::bigint;

-- name: SubscriberImportOverQuota :many
-- The addresses of an import batch (in the batch's order) that would add
-- subscribers beyond the room the quota leaves: the new addresses after the first
-- @room. They are taken out of the batch and reported as rejected rows. Addresses
-- the account has (updates) never count.
SELECT u.email_lower::text
FROM unnest(@email_lowers::text[]) WITH ORDINALITY AS u (email_lower, n)
WHERE NOT EXISTS (SELECT 1 FROM subscribers s WHERE s.account_id = @account_id AND s.email_lower = u.email_lower)
ORDER BY u.n
OFFSET @room;
