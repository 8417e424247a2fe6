-- +goose Up
-- Per recipient domain pacing and warm-up of a sender (internal/pacing).
-- domain_limits: [{group|domain, per_second}], the sender's caps per domain group.
-- warmup: {preset|caps, start} or NULL, the daily caps of a sender warming up.
ALTER TABLE senders
    ADD COLUMN domain_limits jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(domain_limits) = 'array'),
    ADD COLUMN warmup jsonb CHECK (warmup IS NULL OR jsonb_typeof(warmup) = 'object');

-- What a warming-up sender sent on each UTC day, shared by every executor
-- process: a send takes one from the day's cap before it goes to the provider
-- (SenderWarmupTake), so replicas together stay under it. last_grant is what the
-- last take granted (0 once the day's cap is used up). Rows of past days are
-- kept for the dashboard's history and go with the sender.
CREATE TABLE sender_warmup_usage (
    account_id bigint  NOT NULL,
    sender_id  bigint  NOT NULL,
    day        date    NOT NULL,
    used       integer NOT NULL DEFAULT 0 CHECK (used >= 0),
    last_grant integer NOT NULL DEFAULT 0,
    PRIMARY KEY (sender_id, day),
    FOREIGN KEY (account_id, sender_id) REFERENCES senders (account_id, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE sender_warmup_usage;
ALTER TABLE senders DROP COLUMN warmup, DROP COLUMN domain_limits;
