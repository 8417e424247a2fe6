-- +goose Up
-- events has no foreign key to accounts (00170: it cost every acknowledgement a key
-- check), so the cascade it gave is done here: whatever deletes an account, the
-- account's events go with it, in the same statement. A statement-level trigger
-- with the deleted rows as a transition table: one DELETE however many accounts go.
-- +goose StatementBegin
CREATE FUNCTION events_delete_of_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM events WHERE account_id IN (SELECT id FROM deleted_accounts);
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER events_delete_of_accounts AFTER DELETE ON accounts
    REFERENCING OLD TABLE AS deleted_accounts
    FOR EACH STATEMENT EXECUTE FUNCTION events_delete_of_accounts();
-- Events left behind by accounts deleted since 00170.
DELETE FROM events e WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = e.account_id);

-- +goose Down
DROP TRIGGER events_delete_of_accounts ON accounts;
DROP FUNCTION events_delete_of_accounts();
