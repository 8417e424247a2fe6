-- +goose Up
-- What a key may do: 'full' (everything, the default and what every existing key
-- was) or 'read_only' (reads, and minting a stream token to watch events; every
-- request that changes something is refused with 403 before it runs). A dashboard
-- session signed in with a key has that key's role; one from a login link is full.
ALTER TABLE api_keys ADD COLUMN role text NOT NULL DEFAULT 'full' CHECK (role IN ('full', 'read_only'));

-- +goose Down
ALTER TABLE api_keys DROP COLUMN role;
