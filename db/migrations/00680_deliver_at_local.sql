-- +goose Up
-- Local-time delivery (docs/executor.md "When mail goes out"): a campaign may carry
-- deliver_at_local ("HH:MM"); its build queues each row due at the next occurrence
-- of that wall-clock time in the recipient's zone (attributes.timezone when valid,
-- else the account's time_zone, else UTC), at or after the moment the row is built.
ALTER TABLE accounts ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC' CHECK (length(time_zone) BETWEEN 1 AND 64);
ALTER TABLE campaigns ADD COLUMN deliver_at_local text
    CHECK (deliver_at_local ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$');

-- sendonce_local_due is the first instant at or after @after at which the wall
-- clock of the zone shows @at_local (of that day or the next). The zone is
-- sub_zone when it is a plain IANA-shaped name PostgreSQL knows, else
-- account_zone, else UTC: a bad zone in a subscriber's attributes never fails a
-- build. A wall time that does not exist that day (spring forward) is due at the
-- first instant after the gap (the transition); one that occurs twice (fall back)
-- at its first occurrence at or after @after (the second when @after lies
-- between them). Transitions fall on whole minutes (tzdata), so the
-- search near one (only on the few days a zone changes its offset) is exact.
-- +goose StatementBegin
CREATE FUNCTION sendonce_local_due(sub_zone text, account_zone text, at_local text, after timestamptz)
RETURNS timestamptz LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
    zone  text := 'UTC';
    d     date;
    wall  timestamp;
    x     timestamptz;
BEGIN
    IF sub_zone IS NOT NULL AND length(sub_zone) <= 64
       AND (sub_zone ~ '^[A-Za-z_]+(/[A-Za-z0-9_+-]+)+$' OR sub_zone ~ '^[A-Za-z]+$') THEN
        BEGIN
            PERFORM after AT TIME ZONE sub_zone;
            zone := sub_zone;
        EXCEPTION WHEN OTHERS THEN
            zone := NULL;
        END;
    ELSE
        zone := NULL;
    END IF;
    IF zone IS NULL THEN
        BEGIN
            PERFORM after AT TIME ZONE account_zone;
            zone := account_zone;
        EXCEPTION WHEN OTHERS THEN
            zone := 'UTC';
        END;
    END IF;
    d := (after AT TIME ZONE zone)::date;
    FOR i IN 0..2 LOOP
        wall := (d + i) + at_local::time;
        x := wall AT TIME ZONE zone;
        IF (x AT TIME ZONE zone) <> wall
           OR ((x - interval '3 hours') AT TIME ZONE zone) <> wall - interval '3 hours'
           OR ((x + interval '3 hours') AT TIME ZONE zone) <> wall + interval '3 hours' THEN
            -- an offset change near: the first instant at or after @after at which
            -- the wall clock reaches wall (crosses it: a minute earlier it was before)
            SELECT min(m) INTO x
            FROM generate_series(date_trunc('minute', x) - interval '3 hours',
                                 date_trunc('minute', x) + interval '3 hours', interval '1 minute') m
            WHERE m >= after AND (m AT TIME ZONE zone) >= wall
              AND ((m - interval '1 minute') AT TIME ZONE zone) < wall;
        END IF;
        IF x IS NOT NULL AND x >= after THEN
            RETURN x;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION sendonce_local_due(text, text, text, timestamptz);
ALTER TABLE campaigns DROP COLUMN deliver_at_local;
ALTER TABLE accounts DROP COLUMN time_zone;
