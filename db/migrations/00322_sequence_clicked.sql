-- A sequence's clicked condition asks whether one send (a step's, by its job id)
-- had a human click: the hits of one send, found without scanning the hits of its
-- whole step campaign.

-- +goose Up
CREATE INDEX tracking_hits_send_click_idx ON tracking_hits (send_id) WHERE kind = 'click';

-- +goose Down
DROP INDEX tracking_hits_send_click_idx;
