-- A sequence triggered by a date in the subscriber's attributes: attributes.<date_attribute>
-- (YYYY-MM-DD) plus date_offset_days, at date_at (HH:MM) in the sequence's time zone.
-- Each subscriber is enrolled once, due at that moment (the advancer waits for it).

-- +goose Up
ALTER TABLE sequences DROP CONSTRAINT sequences_trigger_type_check;
ALTER TABLE sequences ADD CONSTRAINT sequences_trigger_type_check
    CHECK (trigger_type IN ('manual', 'list_joined', 'confirmed', 'event', 'date_attribute'));
ALTER TABLE sequences
    ADD COLUMN date_attribute   text CHECK (date_attribute ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'),
    ADD COLUMN date_offset_days integer NOT NULL DEFAULT 0 CHECK (date_offset_days BETWEEN -366 AND 366),
    ADD COLUMN date_at          text NOT NULL DEFAULT '09:00' CHECK (date_at ~ '^[0-2][0-9]:[0-5][0-9]$');

-- +goose Down
DELETE FROM sequences WHERE trigger_type = 'date_attribute';
ALTER TABLE sequences DROP COLUMN date_attribute, DROP COLUMN date_offset_days, DROP COLUMN date_at;
ALTER TABLE sequences DROP CONSTRAINT sequences_trigger_type_check;
ALTER TABLE sequences ADD CONSTRAINT sequences_trigger_type_check
    CHECK (trigger_type IN ('manual', 'list_joined', 'confirmed', 'event'));
