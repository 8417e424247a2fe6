-- One person's activity (GET /v1/subscribers/{id}/activity, the data export):
--
-- * the opt-in, opt-out and suppression events of an address: a partial index
--   like events_campaign_idx holds only those (a handful per person), by account
--   and address, so the per-recipient send.* events, the bulk of the table, cost
--   only the predicate's check when written. The address is indexed as the
--   lower-cased text the event holds.
-- * the opens and clicks of a send: the clicks had a partial index by send; the
--   opens had none, so a person's opens meant every open of the campaign. Hits are
--   written in batches, insert only: one more index entry per hit.

-- +goose Up
CREATE INDEX events_person_idx ON events (account_id, lower(data ->> 'email'), id)
    WHERE type LIKE 'subscriber.%' OR type LIKE 'suppression.%';
CREATE INDEX tracking_hits_send_idx ON tracking_hits (send_id);
DROP INDEX tracking_hits_send_click_idx;

-- +goose Down
CREATE INDEX tracking_hits_send_click_idx ON tracking_hits (send_id) WHERE kind = 'click';
DROP INDEX tracking_hits_send_idx;
DROP INDEX events_person_idx;
