-- +goose Up
-- A membership records whether the address still wants the list: a one-click
-- unsubscribe or the preference page turns it to unsubscribed (with where and when)
-- instead of deleting it, so the build can skip it and a re-import cannot silently
-- bring it back.
ALTER TABLE list_members
    ADD COLUMN status        text        NOT NULL DEFAULT 'subscribed'
                                         CHECK (status IN ('subscribed', 'unsubscribed')),
    ADD COLUMN status_source text        NOT NULL DEFAULT '',
    ADD COLUMN status_at     timestamptz NOT NULL DEFAULT now();

-- What a one-click unsubscribe removes: the lists of the campaign (list, the
-- default, as Gmail's bulk-sender rules expect) or every mail of the account.
ALTER TABLE accounts
    ADD COLUMN unsubscribe_scope text NOT NULL DEFAULT 'list'
                                 CHECK (unsubscribe_scope IN ('list', 'account'));

-- +goose Down
ALTER TABLE accounts DROP COLUMN unsubscribe_scope;
ALTER TABLE list_members DROP COLUMN status, DROP COLUMN status_source, DROP COLUMN status_at;
