-- The complaint-rate guard (internal/complaint): per account and route (the sender
-- a send went through, sends.via_sender_id; 0 for the environment's provider),
-- complaints ÷ delivered over a sliding window. A route above the threshold, with
-- enough deliveries to judge, has a row here; its sending campaigns are paused with
-- the reason, and so is any campaign of that route that starts while the row
-- exists. Resuming one of its campaigns by hand deletes the row (the operator's
-- decision; the next complaint judges again), as resuming clears an auth pause.

-- +goose Up
CREATE TABLE complaint_guards (
    account_id  bigint           NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    sender_key  bigint           NOT NULL, -- senders.id, or 0: the environment's provider
    delivered   bigint           NOT NULL,
    complaints  bigint           NOT NULL,
    rate        double precision NOT NULL,
    reason      text             NOT NULL,
    tripped_at  timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, sender_key)
);

-- The guard finds the routes with new complaints without reading every send:
-- complaints are rare, so this index is small and its upkeep is only on them.
CREATE INDEX sends_complaint_idx ON sends (feedback_at) WHERE feedback = 'complaint';

-- +goose Down
DROP INDEX sends_complaint_idx;
DROP TABLE complaint_guards;
