-- +goose Up
-- What an event row costs the statement that writes it (one per acknowledged
-- message): no foreign-key check per row (events are only ever written from rows
-- that belong to the account already: sends, campaigns, subscribers), and a BRIN
-- index instead of a btree for retention's scan by age (events are appended in
-- time order, so block ranges summarise it well and an insert costs next to nothing).
-- What the foreign key also gave, ON DELETE CASCADE, is lost: the product deletes no
-- accounts; whatever deletes one must delete its events too.
ALTER TABLE events DROP CONSTRAINT events_account_id_fkey;
DROP INDEX events_occurred_idx;
CREATE INDEX events_occurred_brin ON events USING brin (occurred_at);

-- +goose Down
DROP INDEX events_occurred_brin;
CREATE INDEX events_occurred_idx ON events (occurred_at);
ALTER TABLE events ADD CONSTRAINT events_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE;
