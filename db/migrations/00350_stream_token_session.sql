-- +goose Up
-- A stream token minted by a dashboard session lives no longer than the session:
-- signing out deletes the session and, with it, the token, whose streams end.
ALTER TABLE event_stream_tokens ADD COLUMN session_id bigint REFERENCES dashboard_sessions (id) ON DELETE CASCADE;
CREATE INDEX event_stream_tokens_session_idx ON event_stream_tokens (session_id) WHERE session_id IS NOT NULL;

-- +goose Down
DROP INDEX event_stream_tokens_session_idx;
ALTER TABLE event_stream_tokens DROP COLUMN session_id;
