-- Sending windows (docs/executor.md, "Sending windows"): a campaign, or a sequence
-- for its step campaigns, may carry the weekdays and hours during which its rows
-- are claimed: {"days": ["mon", …], "start": "HH:MM", "end": "HH:MM",
-- "time_zone": "Europe/Berlin"} (internal/sendwindow validates it; time_zone
-- absent: the account's, for a sequence the sequence's). Outside the window the
-- executor's dealer does not claim for the campaign and waits for the next opening
-- in memory: no row is written and no index changes, so the window costs the send
-- path nothing.

-- +goose Up
ALTER TABLE campaigns ADD COLUMN send_window jsonb CHECK (send_window IS NULL OR jsonb_typeof(send_window) = 'object');
ALTER TABLE sequences ADD COLUMN send_window jsonb CHECK (send_window IS NULL OR jsonb_typeof(send_window) = 'object');

-- +goose Down
ALTER TABLE sequences DROP COLUMN send_window;
ALTER TABLE campaigns DROP COLUMN send_window;
