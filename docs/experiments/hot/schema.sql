-- The HOT-design experiment of docs/performance.md: run with docs/experiments/hot/run.sh.
-- Variants: A, today's row shape and indexes; B, no index names a column a claim or an ack changes (leases per
-- batch, provider ids in their own table, a cursor per campaign); C, A without the per-message events; D, B without them.
-- A2, B2, E, F, G, AF and GF (with the event batches of migration 00840): below, after D.
DROP TABLE IF EXISTS sa, sb, sf, sg, se, q, ev, evb, pm, lb, cur CASCADE;
DROP SEQUENCE IF EXISTS evb_seq;
DROP PROCEDURE IF EXISTS run_b(int);
DROP PROCEDURE IF EXISTS run_g(int);
CREATE TABLE ev (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, account_id bigint NOT NULL, type text NOT NULL,
  occurred_at timestamptz NOT NULL DEFAULT now(), data jsonb NOT NULL, xid bigint NOT NULL DEFAULT pg_current_xact_id()::text::bigint);
CREATE INDEX ev_order ON ev (account_id, xid, id);
-- A: today's shape
CREATE TABLE sa (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, account_id bigint NOT NULL, campaign_id bigint NOT NULL,
  subscriber_id bigint NOT NULL, email text NOT NULL, email_lower text NOT NULL, job_id text NOT NULL, status text NOT NULL DEFAULT 'queued',
  attempts int NOT NULL DEFAULT 0, lease_until timestamptz, executor_id bigint, route text, provider_message_id text, last_error text,
  next_attempt_at timestamptz, in_doubt bool NOT NULL DEFAULT false, sent_at timestamptz, created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(), UNIQUE (campaign_id, subscriber_id));
CREATE INDEX sa_claim ON sa (campaign_id, id) WHERE status = 'queued';
CREATE INDEX sa_lease ON sa (lease_until) WHERE status = 'sending';
CREATE INDEX sa_cs ON sa (campaign_id, status, id) WHERE status NOT IN ('queued', 'sending');
CREATE INDEX sa_pm ON sa (account_id, provider_message_id) WHERE provider_message_id IS NOT NULL;
-- B: no index names a column that a claim or an ack changes; leases per batch; provider ids in their own table
CREATE TABLE sb (LIKE sa INCLUDING DEFAULTS) WITH (fillfactor = 60);
ALTER TABLE sb ADD PRIMARY KEY (id);
ALTER TABLE sb ADD UNIQUE (campaign_id, subscriber_id);
CREATE INDEX sb_order ON sb (campaign_id, id);
CREATE TABLE pm (account_id bigint NOT NULL, provider_message_id text NOT NULL, send_id bigint NOT NULL);
CREATE INDEX pm_idx ON pm (account_id, provider_message_id);
CREATE TABLE lb (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, campaign_id bigint NOT NULL, lease_until timestamptz NOT NULL, ids bigint[] NOT NULL);
CREATE INDEX lb_lease ON lb (lease_until);
CREATE TABLE cur (campaign_id bigint PRIMARY KEY, next_id bigint NOT NULL);

-- Each variant's build: its rows inserted (and, for E, its queue), timed and measured on its own by run.sh.
CREATE OR REPLACE PROCEDURE fill_a(n int) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sa (account_id, campaign_id, subscriber_id, email, email_lower, job_id)
    SELECT 1, 1, g, 'user' || g || '@example.com', 'user' || g || '@example.com', 'campaign:1:' || g FROM generate_series(1, n) g;
END $$;
CREATE OR REPLACE PROCEDURE fill_b(n int) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sb (id, account_id, campaign_id, subscriber_id, email, email_lower, job_id)
    SELECT g, 1, 1, g, 'user' || g || '@example.com', 'user' || g || '@example.com', 'campaign:1:' || g FROM generate_series(1, n) g;
  INSERT INTO cur VALUES (1, 0);
END $$;
-- A: claim 50 (queued -> sending, lease), commit; acknowledge them (sent, provider id) with their events, commit.
CREATE OR REPLACE PROCEDURE run_a(batches int) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; c_next bigint := 0;
BEGIN
  FOR i IN 1..batches LOOP
    -- the executor's cursor past the ids it claimed (SendClaimBatch's after_id), kept in memory
    WITH picked AS (SELECT id FROM sa WHERE campaign_id = 1 AND status = 'queued' AND id > c_next ORDER BY id LIMIT 50 FOR UPDATE SKIP LOCKED),
    c AS (UPDATE sa s SET status = 'sending', lease_until = now() + interval '2 minutes', attempts = s.attempts + 1,
           executor_id = 7, route = 'default', updated_at = now() FROM picked WHERE s.id = picked.id RETURNING s.id)
    SELECT array_agg(id) INTO ids FROM c;
    c_next := (SELECT max(x) FROM unnest(ids) x);
    COMMIT;
    WITH acked AS (UPDATE sa s SET status = 'sent', provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(),
           lease_until = NULL, updated_at = now() WHERE s.id = ANY(ids) AND s.status = 'sending' RETURNING s.*)
    INSERT INTO ev (account_id, type, data) SELECT a.account_id, 'send.' || a.status,
      jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id, 'subscriber_id', a.subscriber_id, 'email', a.email,
        'status', a.status, 'attempts', a.attempts, 'provider_message_id', a.provider_message_id, 'error', NULL) FROM acked a;
    COMMIT;
  END LOOP;
END $$;

-- C: A without the events (what the outbox costs)
CREATE OR REPLACE PROCEDURE run_c(batches int) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; c_next bigint := 0;
BEGIN
  FOR i IN 1..batches LOOP
    -- the executor's cursor past the ids it claimed (SendClaimBatch's after_id), kept in memory
    WITH picked AS (SELECT id FROM sa WHERE campaign_id = 1 AND status = 'queued' AND id > c_next ORDER BY id LIMIT 50 FOR UPDATE SKIP LOCKED),
    c AS (UPDATE sa s SET status = 'sending', lease_until = now() + interval '2 minutes', attempts = s.attempts + 1,
           executor_id = 7, route = 'default', updated_at = now() FROM picked WHERE s.id = picked.id RETURNING s.id)
    SELECT array_agg(id) INTO ids FROM c;
    c_next := (SELECT max(x) FROM unnest(ids) x);
    COMMIT;
    WITH acked AS (UPDATE sa s SET status = 'sent', provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(),
           lease_until = NULL, updated_at = now() WHERE s.id = ANY(ids) AND s.status = 'sending' RETURNING s.id)
    SELECT count(*) INTO c_next FROM acked;
    c_next := (SELECT max(x) FROM unnest(ids) x);
    COMMIT;
  END LOOP;
END $$;

-- B: claim 50 past the campaign's cursor (lease and attempts: unindexed), one lease row for the batch, commit;
-- acknowledge (status, provider id: unindexed), the provider ids into their table, the events, the lease row deleted, commit.
CREATE OR REPLACE PROCEDURE run_b(batches int, with_events bool DEFAULT true) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; lease bigint; c_next bigint;
BEGIN
  FOR i IN 1..batches LOOP
    SELECT next_id INTO c_next FROM cur WHERE campaign_id = 1 FOR UPDATE;
    WITH picked AS (SELECT id FROM sb WHERE campaign_id = 1 AND id > c_next AND status = 'queued' ORDER BY id LIMIT 50 FOR UPDATE SKIP LOCKED),
    c AS (UPDATE sb s SET lease_until = now() + interval '2 minutes', attempts = s.attempts + 1,
           executor_id = 7, route = 'default', updated_at = now() FROM picked WHERE s.id = picked.id RETURNING s.id)
    SELECT array_agg(id) INTO ids FROM c;
    UPDATE cur SET next_id = (SELECT max(x) FROM unnest(ids) x) WHERE campaign_id = 1;
    INSERT INTO lb (campaign_id, lease_until, ids) VALUES (1, now() + interval '2 minutes', ids) RETURNING id INTO lease;
    COMMIT;
    WITH acked AS (UPDATE sb s SET status = 'sent', provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(),
           lease_until = NULL, updated_at = now() WHERE s.id = ANY(ids) AND s.status = 'queued' RETURNING s.*),
    p AS (INSERT INTO pm SELECT a.account_id, a.provider_message_id, a.id FROM acked a)
    INSERT INTO ev (account_id, type, data) SELECT a.account_id, 'send.' || a.status,
      jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id, 'subscriber_id', a.subscriber_id, 'email', a.email,
        'status', a.status, 'attempts', a.attempts, 'provider_message_id', a.provider_message_id, 'error', NULL) FROM acked a
      WHERE with_events;
    DELETE FROM lb WHERE id = lease;
    COMMIT;
  END LOOP;
END $$;

-- D: B without the events (both levers at once: the floor of the row work with neither the status indexes nor the outbox)
CREATE OR REPLACE PROCEDURE run_d(batches int) LANGUAGE plpgsql AS $$
BEGIN
  CALL run_b(batches, false);
END $$;

-- Round 4, session 14: the candidates again, with the outbox as the product now writes it (one event_batches row
-- per acknowledgement, its payloads a jsonb[]: migration 00840), and two designs the variants above did not try.
--   A2 — today: A with the batch event.
--   B2 — B with the batch event.
--   E  — the issue's narrow queue: the rows not yet claimed in a table of their own (campaign, send id), claimed by
--        deleting them with SKIP LOCKED; the lease per batch; the outcome a HOT update of a row no index names a
--        changing column of; provider ids in their own table.
--   F  — the claim writes no row: claims of a campaign take turns on its cursor row and read the next queued ids
--        from today's claim index; the lease (ids, attempts) is a row per batch; the acknowledgement is today's
--        non-HOT update (status still in the partial indexes; no lease index).
--   G  — F's claim and B's acknowledgement: no row written at the claim, the outcome a HOT update.
CREATE SEQUENCE evb_seq INCREMENT BY 1024;
CREATE TABLE evb (first_id bigint PRIMARY KEY, account_id bigint NOT NULL, xid bigint NOT NULL DEFAULT pg_current_xact_id()::text::bigint,
  occurred_at timestamptz NOT NULL, n int NOT NULL, types text[] NOT NULL, data jsonb[] NOT NULL);
DO $$ BEGIN EXECUTE 'ALTER TABLE evb ALTER COLUMN data SET COMPRESSION lz4'; EXCEPTION WHEN feature_not_supported OR syntax_error THEN NULL; END $$;
CREATE INDEX evb_order ON evb (account_id, xid, first_id);
-- F: A's table without the lease index (the lease is in lb)
CREATE TABLE sf (LIKE sa INCLUDING DEFAULTS);
ALTER TABLE sf ADD PRIMARY KEY (id);
ALTER TABLE sf ADD UNIQUE (campaign_id, subscriber_id);
CREATE INDEX sf_claim ON sf (campaign_id, id) WHERE status = 'queued';
CREATE INDEX sf_cs ON sf (campaign_id, status, id) WHERE status NOT IN ('queued', 'sending');
CREATE INDEX sf_pm ON sf (account_id, provider_message_id) WHERE provider_message_id IS NOT NULL;
-- G: B's table (no index names status, lease or provider id), room on each page for the outcome's version
CREATE TABLE sg (LIKE sa INCLUDING DEFAULTS) WITH (fillfactor = 70);
ALTER TABLE sg ADD PRIMARY KEY (id);
ALTER TABLE sg ADD UNIQUE (campaign_id, subscriber_id);
CREATE INDEX sg_order ON sg (campaign_id, id);
-- E: G's table and the queue
CREATE TABLE se (LIKE sg INCLUDING DEFAULTS) WITH (fillfactor = 70);
ALTER TABLE se ADD PRIMARY KEY (id);
ALTER TABLE se ADD UNIQUE (campaign_id, subscriber_id);
CREATE TABLE q (campaign_id bigint NOT NULL, send_id bigint NOT NULL, PRIMARY KEY (campaign_id, send_id));

CREATE OR REPLACE PROCEDURE fill_f(n int) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sf (id, account_id, campaign_id, subscriber_id, email, email_lower, job_id)
    SELECT g, 1, 1, g, 'user' || g || '@example.com', 'user' || g || '@example.com', 'campaign:1:' || g FROM generate_series(1, n) g;
  INSERT INTO cur VALUES (1, 0);
END $$;
CREATE OR REPLACE PROCEDURE fill_g(n int) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sg (id, account_id, campaign_id, subscriber_id, email, email_lower, job_id)
    SELECT g, 1, 1, g, 'user' || g || '@example.com', 'user' || g || '@example.com', 'campaign:1:' || g FROM generate_series(1, n) g;
  INSERT INTO cur VALUES (1, 0);
END $$;
CREATE OR REPLACE PROCEDURE fill_e(n int) LANGUAGE plpgsql AS $$
BEGIN
  WITH r AS (INSERT INTO se (id, account_id, campaign_id, subscriber_id, email, email_lower, job_id)
    SELECT g, 1, 1, g, 'user' || g || '@example.com', 'user' || g || '@example.com', 'campaign:1:' || g FROM generate_series(1, n) g
    RETURNING campaign_id, id)
  INSERT INTO q SELECT campaign_id, id FROM r;
END $$;

-- A2: A with the batch event
CREATE OR REPLACE PROCEDURE run_a2(batches int) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; c_next bigint := 0;
BEGIN
  FOR i IN 1..batches LOOP
    WITH picked AS (SELECT id FROM sa WHERE campaign_id = 1 AND status = 'queued' AND id > c_next ORDER BY id LIMIT 50 FOR UPDATE SKIP LOCKED),
    c AS (UPDATE sa s SET status = 'sending', lease_until = now() + interval '2 minutes', attempts = s.attempts + 1,
           executor_id = 7, route = 'default', updated_at = now() FROM picked WHERE s.id = picked.id RETURNING s.id)
    SELECT array_agg(id) INTO ids FROM c;
    c_next := (SELECT max(x) FROM unnest(ids) x);
    COMMIT;
    WITH acked AS (UPDATE sa s SET status = 'sent', provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(),
           lease_until = NULL, updated_at = now() WHERE s.id = ANY(ids) AND s.status = 'sending' RETURNING s.*),
    o AS (SELECT a.id, a.account_id, 'send.' || a.status AS type, jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id,
            'subscriber_id', a.subscriber_id, 'email', a.email, 'status', a.status, 'attempts', a.attempts,
            'provider_message_id', a.provider_message_id, 'error', NULL) AS data FROM acked a)
    INSERT INTO evb (first_id, account_id, occurred_at, n, types, data)
      SELECT nextval('evb_seq'), o.account_id, now(), count(*), array_agg(DISTINCT o.type), array_agg(o.data ORDER BY o.id) FROM o GROUP BY o.account_id;
    COMMIT;
  END LOOP;
END $$;

-- B2: B with the batch event
CREATE OR REPLACE PROCEDURE run_b2(batches int) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; lease bigint; c_next bigint;
BEGIN
  FOR i IN 1..batches LOOP
    SELECT next_id INTO c_next FROM cur WHERE campaign_id = 1 FOR UPDATE;
    WITH picked AS (SELECT id FROM sb WHERE campaign_id = 1 AND id > c_next AND status = 'queued' ORDER BY id LIMIT 50 FOR UPDATE SKIP LOCKED),
    c AS (UPDATE sb s SET lease_until = now() + interval '2 minutes', attempts = s.attempts + 1,
           executor_id = 7, route = 'default', updated_at = now() FROM picked WHERE s.id = picked.id RETURNING s.id)
    SELECT array_agg(id) INTO ids FROM c;
    UPDATE cur SET next_id = (SELECT max(x) FROM unnest(ids) x) WHERE campaign_id = 1;
    INSERT INTO lb (campaign_id, lease_until, ids) VALUES (1, now() + interval '2 minutes', ids) RETURNING id INTO lease;
    COMMIT;
    WITH acked AS (UPDATE sb s SET status = 'sent', provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(),
           lease_until = NULL, updated_at = now() WHERE s.id = ANY(ids) AND s.status = 'queued' RETURNING s.*),
    p AS (INSERT INTO pm SELECT a.account_id, a.provider_message_id, a.id FROM acked a),
    o AS (SELECT a.id, a.account_id, 'send.' || a.status AS type, jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id,
            'subscriber_id', a.subscriber_id, 'email', a.email, 'status', a.status, 'attempts', a.attempts,
            'provider_message_id', a.provider_message_id, 'error', NULL) AS data FROM acked a)
    INSERT INTO evb (first_id, account_id, occurred_at, n, types, data)
      SELECT nextval('evb_seq'), o.account_id, now(), count(*), array_agg(DISTINCT o.type), array_agg(o.data ORDER BY o.id) FROM o GROUP BY o.account_id;
    DELETE FROM lb WHERE id = lease;
    COMMIT;
  END LOOP;
END $$;

-- F and G: the claim takes the campaign's cursor row, reads the next 50 queued ids (no row lock, no row version) and
-- writes the batch's lease; the acknowledgement settles the rows the lease holds, with the attempt the lease counted.
CREATE OR REPLACE PROCEDURE run_f(batches int) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; lease bigint; c_next bigint;
BEGIN
  FOR i IN 1..batches LOOP
    SELECT next_id INTO c_next FROM cur WHERE campaign_id = 1 FOR UPDATE;
    SELECT array_agg(id ORDER BY id) INTO ids FROM (SELECT id FROM sf WHERE campaign_id = 1 AND status = 'queued' AND id > c_next ORDER BY id LIMIT 50) p;
    UPDATE cur SET next_id = ids[array_upper(ids, 1)] WHERE campaign_id = 1;
    INSERT INTO lb (campaign_id, lease_until, ids) VALUES (1, now() + interval '2 minutes', ids) RETURNING id INTO lease;
    COMMIT;
    WITH l AS (DELETE FROM lb WHERE id = lease RETURNING lb.ids),
    acked AS (UPDATE sf s SET status = 'sent', attempts = s.attempts + 1, executor_id = 7, route = 'default',
           provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(), updated_at = now()
           FROM l WHERE s.id = ANY(l.ids) AND s.status = 'queued' RETURNING s.*),
    o AS (SELECT a.id, a.account_id, 'send.' || a.status AS type, jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id,
            'subscriber_id', a.subscriber_id, 'email', a.email, 'status', a.status, 'attempts', a.attempts,
            'provider_message_id', a.provider_message_id, 'error', NULL) AS data FROM acked a)
    INSERT INTO evb (first_id, account_id, occurred_at, n, types, data)
      SELECT nextval('evb_seq'), o.account_id, now(), count(*), array_agg(DISTINCT o.type), array_agg(o.data ORDER BY o.id) FROM o GROUP BY o.account_id;
    COMMIT;
  END LOOP;
END $$;

CREATE OR REPLACE PROCEDURE run_g(batches int, with_provider_ids bool DEFAULT true) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; lease bigint; c_next bigint;
BEGIN
  FOR i IN 1..batches LOOP
    SELECT next_id INTO c_next FROM cur WHERE campaign_id = 1 FOR UPDATE;
    SELECT array_agg(id ORDER BY id) INTO ids FROM (SELECT id FROM sg WHERE campaign_id = 1 AND status = 'queued' AND id > c_next ORDER BY id LIMIT 50) p;
    UPDATE cur SET next_id = ids[array_upper(ids, 1)] WHERE campaign_id = 1;
    INSERT INTO lb (campaign_id, lease_until, ids) VALUES (1, now() + interval '2 minutes', ids) RETURNING id INTO lease;
    COMMIT;
    WITH l AS (DELETE FROM lb WHERE id = lease RETURNING lb.ids),
    acked AS (UPDATE sg s SET status = 'sent', attempts = s.attempts + 1, executor_id = 7, route = 'default',
           provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(), updated_at = now()
           FROM l WHERE s.id = ANY(l.ids) AND s.status = 'queued' RETURNING s.*),
    p AS (INSERT INTO pm SELECT a.account_id, a.provider_message_id, a.id FROM acked a WHERE with_provider_ids),
    o AS (SELECT a.id, a.account_id, 'send.' || a.status AS type, jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id,
            'subscriber_id', a.subscriber_id, 'email', a.email, 'status', a.status, 'attempts', a.attempts,
            'provider_message_id', a.provider_message_id, 'error', NULL) AS data FROM acked a)
    INSERT INTO evb (first_id, account_id, occurred_at, n, types, data)
      SELECT nextval('evb_seq'), o.account_id, now(), count(*), array_agg(DISTINCT o.type), array_agg(o.data ORDER BY o.id) FROM o GROUP BY o.account_id;
    COMMIT;
  END LOOP;
END $$;

-- GN: G without the provider-id table (webhooks that name the job id need no lookup by the provider's id)
CREATE OR REPLACE PROCEDURE run_gn(batches int) LANGUAGE plpgsql AS $$
BEGIN
  CALL run_g(batches, false);
END $$;

-- E: the claim deletes the next 50 queue rows (SKIP LOCKED, the executor's cursor in memory as A's) and writes the
-- batch's lease; the acknowledgement is G's.
CREATE OR REPLACE PROCEDURE run_e(batches int) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; lease bigint; c_next bigint := 0;
BEGIN
  FOR i IN 1..batches LOOP
    WITH picked AS (SELECT campaign_id, send_id FROM q WHERE campaign_id = 1 AND send_id > c_next ORDER BY send_id LIMIT 50 FOR UPDATE SKIP LOCKED),
    d AS (DELETE FROM q USING picked WHERE q.campaign_id = picked.campaign_id AND q.send_id = picked.send_id RETURNING q.send_id)
    SELECT array_agg(send_id ORDER BY send_id) INTO ids FROM d;
    c_next := ids[array_upper(ids, 1)];
    INSERT INTO lb (campaign_id, lease_until, ids) VALUES (1, now() + interval '2 minutes', ids) RETURNING id INTO lease;
    COMMIT;
    WITH l AS (DELETE FROM lb WHERE id = lease RETURNING lb.ids),
    acked AS (UPDATE se s SET status = 'sent', attempts = s.attempts + 1, executor_id = 7, route = 'default',
           provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(), updated_at = now()
           FROM l WHERE s.id = ANY(l.ids) AND s.status = 'queued' RETURNING s.*),
    p AS (INSERT INTO pm SELECT a.account_id, a.provider_message_id, a.id FROM acked a),
    o AS (SELECT a.id, a.account_id, 'send.' || a.status AS type, jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id,
            'subscriber_id', a.subscriber_id, 'email', a.email, 'status', a.status, 'attempts', a.attempts,
            'provider_message_id', a.provider_message_id, 'error', NULL) AS data FROM acked a)
    INSERT INTO evb (first_id, account_id, occurred_at, n, types, data)
      SELECT nextval('evb_seq'), o.account_id, now(), count(*), array_agg(DISTINCT o.type), array_agg(o.data ORDER BY o.id) FROM o GROUP BY o.account_id;
    COMMIT;
  END LOOP;
END $$;

-- With the work around the rows (variants AF and GF): the claim's guard on the campaign and its account, its
-- re-check of each row's subscriber and suppression (LATERAL probes, as SendClaimBatch), the columns a message is
-- built from returned; the acknowledgement's report counters (per campaign and recipient domain, per account and
-- day), as SendAckMany. AF is today's claim and acknowledgement; GF is G's with the same work around them.
DROP TABLE IF EXISTS acc, camp, subs, supp, cc, dc CASCADE;
CREATE TABLE acc (id bigint PRIMARY KEY, suspended_at timestamptz, deleted_at timestamptz);
CREATE TABLE camp (id bigint PRIMARY KEY, account_id bigint NOT NULL, status text NOT NULL);
CREATE TABLE subs (id bigint PRIMARY KEY, account_id bigint NOT NULL, email_lower text NOT NULL, status text NOT NULL,
  name text NOT NULL, attributes jsonb NOT NULL);
CREATE TABLE supp (account_id bigint NOT NULL, email_lower text NOT NULL, PRIMARY KEY (account_id, email_lower));
CREATE TABLE cc (campaign_id bigint NOT NULL, account_id bigint NOT NULL, domain text NOT NULL, sent bigint NOT NULL,
  PRIMARY KEY (campaign_id, domain));
CREATE TABLE dc (account_id bigint NOT NULL, day date NOT NULL, kind text NOT NULL, n bigint NOT NULL, PRIMARY KEY (account_id, day, kind));

-- run.sh calls it before the build it measures (the subscribers are not the build's)
CREATE OR REPLACE PROCEDURE fill_around(n int) LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE acc, camp, subs, supp, cc, dc;
  INSERT INTO acc VALUES (1, NULL, NULL);
  INSERT INTO camp VALUES (1, 1, 'sending');
  INSERT INTO subs SELECT g, 1, 'user' || g || '@example.com', 'confirmed', 'User ' || g, jsonb_build_object('plan', 'pro', 'n', g)
    FROM generate_series(1, n) g;
  INSERT INTO supp SELECT 1, 'other' || g || '@example.com' FROM generate_series(1, n / 10) g;
  ANALYZE acc, camp, subs, supp, cc, dc;
END $$;

CREATE OR REPLACE PROCEDURE run_af(batches int) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; c_next bigint := 0;
BEGIN
  FOR i IN 1..batches LOOP
    WITH picked AS (
      SELECT s.id, s.account_id, s.subscriber_id, s.email_lower FROM sa s
      WHERE s.campaign_id = 1 AND s.status = 'queued' AND s.id > c_next
        AND EXISTS (SELECT 1 FROM camp c CROSS JOIN LATERAL (SELECT 1 FROM acc a WHERE a.id = c.account_id
                      AND a.suspended_at IS NULL AND a.deleted_at IS NULL LIMIT 1) a WHERE c.id = 1 AND c.status = 'sending')
      ORDER BY s.id LIMIT 50 FOR UPDATE OF s SKIP LOCKED),
    judged AS MATERIALIZED (
      SELECT p.id, sub.name, sub.attributes, (sub.id IS NULL OR x.suppressed IS NOT NULL) AS blocked FROM picked p
      LEFT JOIN LATERAL (SELECT sb.id, sb.name, sb.attributes FROM subs sb WHERE sb.id = p.subscriber_id AND sb.status = 'confirmed' LIMIT 1) sub ON true
      LEFT JOIN LATERAL (SELECT true AS suppressed FROM supp x WHERE x.account_id = p.account_id AND x.email_lower = p.email_lower LIMIT 1) x ON true),
    c AS (UPDATE sa s SET status = CASE WHEN j.blocked THEN 'suppressed' ELSE 'sending' END,
           lease_until = CASE WHEN j.blocked THEN NULL ELSE now() + interval '2 minutes' END,
           attempts = CASE WHEN j.blocked THEN s.attempts ELSE s.attempts + 1 END,
           executor_id = 7, route = 'default', updated_at = now()
          FROM judged j WHERE s.id = j.id AND s.id = ANY(ARRAY(SELECT p.id FROM picked p))
          RETURNING s.id, s.account_id, s.campaign_id, s.subscriber_id, s.email, s.job_id, s.status, s.attempts, s.lease_until, j.name, j.attributes)
    SELECT array_agg(id) INTO ids FROM c WHERE status = 'sending';
    c_next := (SELECT max(x) FROM unnest(ids) x);
    COMMIT;
    WITH acked AS (UPDATE sa s SET status = 'sent', provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(),
           lease_until = NULL, updated_at = now() WHERE s.id = ANY(ids) AND s.status = 'sending' RETURNING s.*),
    by_domain AS (INSERT INTO cc SELECT a.campaign_id, a.account_id, substring(a.email_lower FROM '[^@]*$'), count(*) FROM acked a
           GROUP BY 1, 2, 3 ORDER BY 1, 3 ON CONFLICT (campaign_id, domain) DO UPDATE SET sent = cc.sent + excluded.sent),
    by_day AS (INSERT INTO dc SELECT a.account_id, current_date, 'campaign', count(*) FROM acked a GROUP BY 1
           ON CONFLICT (account_id, day, kind) DO UPDATE SET n = dc.n + excluded.n),
    o AS (SELECT a.id, a.account_id, 'send.' || a.status AS type, jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id,
            'subscriber_id', a.subscriber_id, 'email', a.email, 'status', a.status, 'attempts', a.attempts,
            'provider_message_id', a.provider_message_id, 'error', NULL) AS data FROM acked a)
    INSERT INTO evb (first_id, account_id, occurred_at, n, types, data)
      SELECT nextval('evb_seq'), o.account_id, now(), count(*), array_agg(DISTINCT o.type), array_agg(o.data ORDER BY o.id) FROM o GROUP BY o.account_id;
    COMMIT;
  END LOOP;
END $$;

CREATE OR REPLACE PROCEDURE run_gf(batches int) LANGUAGE plpgsql AS $$
DECLARE ids bigint[]; lease bigint;
BEGIN
  FOR i IN 1..batches LOOP
    WITH cursor_row AS (SELECT next_id FROM cur WHERE campaign_id = 1 FOR UPDATE),
    picked AS (
      SELECT s.id, s.account_id, s.subscriber_id, s.email, s.email_lower, s.job_id, s.attempts FROM sg s
      WHERE s.campaign_id = 1 AND s.status = 'queued' AND s.id > (SELECT r.next_id FROM cursor_row r)
        AND EXISTS (SELECT 1 FROM camp c CROSS JOIN LATERAL (SELECT 1 FROM acc a WHERE a.id = c.account_id
                      AND a.suspended_at IS NULL AND a.deleted_at IS NULL LIMIT 1) a WHERE c.id = 1 AND c.status = 'sending')
      ORDER BY s.id LIMIT 50),
    judged AS MATERIALIZED (
      SELECT p.*, sub.name, sub.attributes, (sub.id IS NULL OR x.suppressed IS NOT NULL) AS blocked FROM picked p
      LEFT JOIN LATERAL (SELECT sb.id, sb.name, sb.attributes FROM subs sb WHERE sb.id = p.subscriber_id AND sb.status = 'confirmed' LIMIT 1) sub ON true
      LEFT JOIN LATERAL (SELECT true AS suppressed FROM supp x WHERE x.account_id = p.account_id AND x.email_lower = p.email_lower LIMIT 1) x ON true),
    -- only the excluded rows are written at the claim
    excluded AS (UPDATE sg s SET status = 'suppressed', updated_at = now() FROM judged j WHERE j.blocked AND s.id = j.id RETURNING s.id),
    moved AS (UPDATE cur SET next_id = (SELECT max(j.id) FROM judged j) WHERE campaign_id = 1 AND EXISTS (SELECT 1 FROM judged) RETURNING next_id),
    leased AS (INSERT INTO lb (campaign_id, lease_until, ids)
      SELECT 1, now() + interval '2 minutes', array_agg(j.id ORDER BY j.id) FROM judged j WHERE NOT j.blocked HAVING count(*) > 0
      RETURNING lb.id, lb.lease_until)
    SELECT array_agg(j.id), (SELECT l.id FROM leased l) INTO ids, lease
    FROM judged j, (SELECT count(*) FROM moved) m, (SELECT count(*) FROM excluded) e WHERE NOT j.blocked;
    COMMIT;
    WITH l AS (DELETE FROM lb WHERE id = lease RETURNING lb.ids),
    acked AS (UPDATE sg s SET status = 'sent', attempts = s.attempts + 1, executor_id = 7, route = 'default',
           provider_message_id = 'pm-' || s.id || '@example.com', sent_at = now(), updated_at = now()
           FROM l WHERE s.id = ANY(l.ids) AND s.status = 'queued' RETURNING s.*),
    p AS (INSERT INTO pm SELECT a.account_id, a.provider_message_id, a.id FROM acked a),
    by_domain AS (INSERT INTO cc SELECT a.campaign_id, a.account_id, substring(a.email_lower FROM '[^@]*$'), count(*) FROM acked a
           GROUP BY 1, 2, 3 ORDER BY 1, 3 ON CONFLICT (campaign_id, domain) DO UPDATE SET sent = cc.sent + excluded.sent),
    by_day AS (INSERT INTO dc SELECT a.account_id, current_date, 'campaign', count(*) FROM acked a GROUP BY 1
           ON CONFLICT (account_id, day, kind) DO UPDATE SET n = dc.n + excluded.n),
    o AS (SELECT a.id, a.account_id, 'send.' || a.status AS type, jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id,
            'subscriber_id', a.subscriber_id, 'email', a.email, 'status', a.status, 'attempts', a.attempts,
            'provider_message_id', a.provider_message_id, 'error', NULL) AS data FROM acked a)
    INSERT INTO evb (first_id, account_id, occurred_at, n, types, data)
      SELECT nextval('evb_seq'), o.account_id, now(), count(*), array_agg(DISTINCT o.type), array_agg(o.data ORDER BY o.id) FROM o GROUP BY o.account_id;
    COMMIT;
  END LOOP;
END $$;
