-- When a sent campaign's failed recipients were re-queued (POST
-- /v1/campaigns/{id}/retry-failed): at most once per campaign, so a retry is
-- never repeated by a second click or a replayed request.

-- +goose Up
ALTER TABLE campaigns ADD COLUMN failed_retried_at timestamptz;

-- +goose Down
ALTER TABLE campaigns DROP COLUMN failed_retried_at;
