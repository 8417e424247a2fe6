-- +goose Up
-- Every secret a rotation replaced keeps verifying until its own expiry: with one
-- previous_secret column, a second rotation within the grace period dropped the
-- original secret at once, while the provider side may still sign with it.
CREATE TABLE webhook_previous_secrets (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id  bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    endpoint_id bigint      NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    secret      text        NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX webhook_previous_secrets_endpoint_idx ON webhook_previous_secrets (endpoint_id, expires_at);

INSERT INTO webhook_previous_secrets (account_id, endpoint_id, secret, expires_at)
SELECT account_id, id, previous_secret, previous_expires_at
FROM webhook_endpoints
WHERE previous_secret IS NOT NULL AND previous_secret <> '' AND previous_expires_at > now();

-- previous_expires_at stays: the API shows when the last rotated-out secret expires.
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret;

-- +goose Down
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret text;
UPDATE webhook_endpoints e SET previous_secret = p.secret
FROM (SELECT DISTINCT ON (endpoint_id) endpoint_id, secret FROM webhook_previous_secrets
      ORDER BY endpoint_id, expires_at DESC) p
WHERE p.endpoint_id = e.id;
DROP TABLE webhook_previous_secrets;
