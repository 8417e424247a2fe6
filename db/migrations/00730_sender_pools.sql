-- +goose Up
-- A sender pool is an ordered list of one account's senders (docs/providers.md
-- "Sender pools and failover"): a campaign naming a pool sends through its first
-- sender that is usable (not paused, not refusing), and moves the rows known not
-- to have been accepted to the next one. What a row was sent through stays
-- recorded on the row at claim (sends.via_sender_id), as for any sender.
CREATE TABLE sender_pools (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name       text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, id),
    UNIQUE (account_id, name)
);

-- The members in order (position 0 is the primary). The composite key makes another
-- tenant's sender unreferenceable; a sender in a pool cannot be deleted.
CREATE TABLE sender_pool_members (
    pool_id    bigint   NOT NULL,
    account_id bigint   NOT NULL,
    position   smallint NOT NULL CHECK (position BETWEEN 0 AND 9),
    sender_id  bigint   NOT NULL,
    PRIMARY KEY (pool_id, position),
    UNIQUE (pool_id, sender_id),
    FOREIGN KEY (account_id, pool_id) REFERENCES sender_pools (account_id, id) ON DELETE CASCADE,
    FOREIGN KEY (account_id, sender_id) REFERENCES senders (account_id, id) ON DELETE RESTRICT
);
CREATE INDEX sender_pool_members_sender_idx ON sender_pool_members (account_id, sender_id);

-- A campaign names a sender or a pool, not both. A pool in use cannot be deleted.
ALTER TABLE campaigns
    ADD COLUMN pool_id bigint,
    ADD CONSTRAINT campaigns_pool_fk FOREIGN KEY (account_id, pool_id)
        REFERENCES sender_pools (account_id, id) ON DELETE RESTRICT,
    ADD CONSTRAINT campaigns_sender_or_pool CHECK (pool_id IS NULL OR sender_id IS NULL);
CREATE INDEX campaigns_pool_idx ON campaigns (account_id, pool_id) WHERE pool_id IS NOT NULL;

-- +goose Down
ALTER TABLE campaigns DROP CONSTRAINT campaigns_sender_or_pool, DROP CONSTRAINT campaigns_pool_fk,
    DROP COLUMN pool_id;
DROP TABLE sender_pool_members;
DROP TABLE sender_pools;
