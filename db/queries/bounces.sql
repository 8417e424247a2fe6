-- name: BounceMailboxUpsert :one
INSERT INTO bounce_mailboxes (account_id, host, port, security, username, secret_key_id, secret, folder, enabled)
VALUES (@account_id, @host, @port, @security, @username, @secret_key_id, @secret, @folder, @enabled)
ON CONFLICT (account_id) DO UPDATE
SET host = excluded.host, port = excluded.port, security = excluded.security, username = excluded.username,
    secret_key_id = excluded.secret_key_id, secret = excluded.secret, folder = excluded.folder,
    enabled = excluded.enabled, last_error = NULL, updated_at = now()
RETURNING *;

-- name: BounceMailboxGet :one
SELECT * FROM bounce_mailboxes WHERE account_id = @account_id;

-- name: BounceMailboxDelete :execrows
DELETE FROM bounce_mailboxes WHERE account_id = @account_id;

-- name: BounceMailboxDue :many
-- The enabled mailboxes not polled within the interval, the longest waiting
-- first, so no account's mailbox starves another's; those this process already
-- watches (IDLE) are left out, so they never take the places of the others.
SELECT * FROM bounce_mailboxes
WHERE enabled
  AND account_id <> ALL(coalesce(@watching::bigint[], '{}'))
  AND (last_poll_at IS NULL
       OR last_poll_at <= coalesce(sqlc.narg('now')::timestamptz, now()) - make_interval(secs => @interval_seconds::float8))
ORDER BY last_poll_at NULLS FIRST, account_id
LIMIT @max_rows;

-- name: BounceMailboxPolled :exec
-- A reading's outcome: when, its error if any, and the reader's mode when known
-- (a failure before the server said whether it offers IDLE keeps the last one).
UPDATE bounce_mailboxes
SET last_poll_at = coalesce(sqlc.narg('now')::timestamptz, now()), last_error = sqlc.narg('last_error'),
    reader_mode = coalesce(sqlc.narg('mode'), reader_mode)
WHERE account_id = @account_id;

-- name: BounceMailboxConnected :exec
UPDATE bounce_mailboxes
SET last_connected_at = coalesce(sqlc.narg('now')::timestamptz, now()), reader_mode = @mode
WHERE account_id = @account_id;

-- name: BounceMailboxWatched :many
-- The mailboxes a process watches that are still to be watched as they were
-- when it connected: a mailbox missing here was deleted, disabled or changed
-- (updated_at), and its watcher lets go of it.
SELECT account_id, updated_at FROM bounce_mailboxes
WHERE enabled AND account_id = ANY(@account_ids::bigint[]);

-- name: BounceMailboxSecretsAll :many
-- Every stored mailbox password, for the start-up check that the key ring
-- decrypts them and for rotation. Not a tenant query: it serves the operator.
SELECT account_id, secret_key_id, secret FROM bounce_mailboxes ORDER BY account_id;

-- name: BounceMailboxSecretReplace :execrows
-- Rotation's compare-and-set: re-encrypted under the ring's first key only if the
-- row still holds the ciphertext that was decrypted.
UPDATE bounce_mailboxes SET secret_key_id = @secret_key_id, secret = @secret
WHERE account_id = @account_id AND secret = @old_secret;

-- name: BounceSendGet :one
-- The send a verified Return-Path token names, within the account it names.
SELECT id, job_id, email FROM sends WHERE account_id = @account_id AND id = @id;

-- name: BounceMessageRecord :execrows
-- Zero rows: the message was read before (a crash before its deletion).
INSERT INTO bounce_messages (account_id, message_key, outcome, send_id)
VALUES (@account_id, @message_key, @outcome, sqlc.narg('send_id'))
ON CONFLICT (account_id, message_key) DO NOTHING;

-- name: BounceMessageCounts :many
SELECT outcome, count(*) AS n FROM bounce_messages WHERE account_id = @account_id GROUP BY outcome ORDER BY outcome;

-- name: BounceMessagePrune :execrows
-- The record of a message outlives any crash-and-reread window by far.
DELETE FROM bounce_messages WHERE received_at < coalesce(sqlc.narg('now')::timestamptz, now()) - interval '30 days';
