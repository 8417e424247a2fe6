-- name: DKIMKeyCreate :one
-- A new key starts inactive: it signs nothing until activated, after its TXT
-- record is published.
INSERT INTO dkim_keys (account_id, domain, selector, algorithm, public_key, secret_key_id, secret)
VALUES (@account_id, @domain, @selector, @algorithm, @public_key, @secret_key_id, @secret)
RETURNING *;

-- name: DKIMKeyList :many
-- An account's keys, of one domain or (empty domain) of all, by domain then id.
SELECT * FROM dkim_keys
WHERE account_id = @account_id AND (@domain::text = '' OR domain = @domain)
ORDER BY domain, id
LIMIT 1000;

-- name: DKIMKeyGet :one
SELECT * FROM dkim_keys WHERE account_id = @account_id AND domain = @domain AND id = @id;

-- name: DKIMKeyDeactivateOthers :exec
-- The first half of a rotation: the domain's active key, unless it is the one
-- being activated, stops signing (it stays, published, until deleted). Run in
-- the transaction of DKIMKeyActivate, so the domain is never left without its
-- signing key by a half-done rotation.
UPDATE dkim_keys SET active = false
WHERE account_id = @account_id AND domain = @domain AND active AND id <> @id;

-- name: DKIMKeyActivate :one
UPDATE dkim_keys SET active = true, activated_at = CASE WHEN active THEN activated_at ELSE now() END
WHERE account_id = @account_id AND domain = @domain AND id = @id
RETURNING *;

-- name: DKIMKeyDelete :execrows
-- Only an inactive key: the active one signs (rotate first).
DELETE FROM dkim_keys WHERE account_id = @account_id AND domain = @domain AND id = @id AND NOT active;

-- name: DKIMKeyActive :one
-- The key a message From the domain is signed with, if any.
SELECT * FROM dkim_keys WHERE account_id = @account_id AND domain = @domain AND active;

-- name: DKIMKeySecretsAll :many
-- Every stored private key, for the start-up decryption check and key-ring
-- rotation (an operator's command, across accounts).
SELECT id, account_id, domain, selector, secret_key_id, secret FROM dkim_keys ORDER BY id;

-- name: DKIMKeySecretReplace :execrows
-- Re-sealed under the ring's first key, unless the key changed meanwhile.
UPDATE dkim_keys SET secret_key_id = @secret_key_id, secret = @secret
WHERE account_id = @account_id AND id = @id AND secret = @old_secret;
