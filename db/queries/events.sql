-- Events out: the outbox, its readers (pull, stream, fan-out), the endpoints and
-- their deliveries. Per-recipient events are inserted by the executor statements
-- statements (sends.sql, executor.sql) as CTEs; everything else goes through
-- EventInsert in the transaction of the change it reports.
--
-- The reading order is (xid, id), never id alone: an id is allocated before its
-- transaction commits, so a later id can become visible first. Every reader stops
-- below pg_snapshot_xmin(pg_current_snapshot()), the oldest transaction still
-- running: every row below it is committed or gone for good, so a cursor that moved
-- past a position can never have skipped a row that commits later.
--
-- Events are in two tables: events, a row each, and event_batches, the outcomes
-- of one acknowledgement (00840_event_batches.sql), whose element i is event
-- first_id + i - 1. A reader that pages takes the rows and the batches past its
-- position each in their index order and merges them. Batches never interleave in
-- that order (an xid's batches hold disjoint, rising windows of ids), so the first
-- @lim events past a position are among the rows and the fewest leading batches
-- that hold @lim of them; a batch is expanded only when those before it hold
-- fewer (its "before" count, a lower bound: a type filter counts 1 for a batch
-- that has the type, and the one batch that may straddle the position counts 0),
-- and at most @lim + 1 are read (each past the first holds one at least).

-- name: EventInsert :one
INSERT INTO events (account_id, type, data)
VALUES (sqlc.arg('account_id')::bigint, sqlc.arg('type')::text, sqlc.arg('data')::jsonb)
RETURNING id;

-- name: EventHorizon :one
-- The first xid whose events may still be invisible: readers stop below it.
SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xid;

-- name: EventListAfter :many
-- The pull API and the stream: the account's events after a cursor, in reading
-- order, up to the horizon, optionally of some types only. A stream passes the API
-- key and the dashboard session behind it (NULL for none): the check that the key
-- is not revoked and the session not signed out is in this statement, so in the
-- snapshot the events are read in. An event it returns is visible in a snapshot
-- that does not see the revocation, so it committed before the revocation did: a
-- stream never sends an event committed after its key's revocation (or its
-- session's end), however late it hears of it. (Uncorrelated, the checks run once
-- per statement.)
WITH batches AS (
    SELECT b.first_id, b.xid, b.occurred_at, b.data,
           coalesce(sum(CASE WHEN (b.xid, b.first_id) <= (@after_xid::bigint, @after_id::bigint) THEN 0
                             WHEN cardinality(@types::text[]) = 0 THEN b.n ELSE 1 END)
                    OVER (ORDER BY b.xid, b.first_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM (SELECT b.first_id, b.xid, b.occurred_at, b.n, b.data FROM event_batches b
          WHERE b.account_id = @account_id
            AND (b.xid, b.first_id) > (@after_xid::bigint, sqlc.arg('after_id')::bigint - 1024)
            AND b.xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
            AND (cardinality(@types::text[]) = 0 OR b.types && @types::text[])
          ORDER BY b.xid, b.first_id
          LIMIT sqlc.arg('lim')::int + 1) b
)
SELECT x.id, x.type, x.occurred_at, x.data, x.xid FROM (
    (SELECT e.id, e.type, e.occurred_at, e.data, e.xid FROM events e
     WHERE e.account_id = @account_id
       AND (e.xid, e.id) > (@after_xid::bigint, @after_id::bigint)
       AND e.xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
       AND (cardinality(@types::text[]) = 0 OR e.type = ANY(@types::text[]))
     ORDER BY e.xid, e.id
     LIMIT sqlc.arg('lim')::int)
    UNION ALL
    SELECT b.first_id + u.k - 1, 'send.' || (u.data ->> 'status'), b.occurred_at, u.data, b.xid
    FROM batches b CROSS JOIN LATERAL unnest(b.data) WITH ORDINALITY AS u (data, k)
    WHERE b.before < sqlc.arg('lim')::int
      AND (b.xid, b.first_id + u.k - 1) > (@after_xid::bigint, @after_id::bigint)
      AND (cardinality(@types::text[]) = 0 OR 'send.' || (u.data ->> 'status') = ANY(@types::text[]))
) x
WHERE (sqlc.narg('api_key_id')::bigint IS NULL OR EXISTS (
      SELECT 1 FROM api_keys k
      WHERE k.id = sqlc.narg('api_key_id')::bigint AND k.account_id = @account_id AND k.revoked_at IS NULL))
  AND (sqlc.narg('session_id')::bigint IS NULL OR EXISTS (
      SELECT 1 FROM dashboard_sessions s
      WHERE s.id = sqlc.narg('session_id')::bigint AND s.account_id = @account_id))
ORDER BY x.xid, x.id
LIMIT sqlc.arg('lim')::int;

-- name: EventListNewest :many
-- The account's newest events below the horizon, newest first, optionally of some
-- types only: what a dashboard shows as "recent" (the reading-order listing would
-- need every older page first). Not a reading position: nothing pages from it.
WITH batches AS (
    SELECT b.first_id, b.xid, b.occurred_at, b.data,
           coalesce(sum(CASE WHEN cardinality(@types::text[]) = 0 THEN b.n ELSE 1 END)
                    OVER (ORDER BY b.xid DESC, b.first_id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM (SELECT b.first_id, b.xid, b.occurred_at, b.n, b.data FROM event_batches b
          WHERE b.account_id = @account_id
            AND b.xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
            AND (cardinality(@types::text[]) = 0 OR b.types && @types::text[])
          ORDER BY b.xid DESC, b.first_id DESC
          LIMIT sqlc.arg('lim')::int) b
)
SELECT x.id, x.type, x.occurred_at, x.data, x.xid FROM (
    (SELECT e.id, e.type, e.occurred_at, e.data, e.xid FROM events e
     WHERE e.account_id = @account_id
       AND e.xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
       AND (cardinality(@types::text[]) = 0 OR e.type = ANY(@types::text[]))
     ORDER BY e.xid DESC, e.id DESC
     LIMIT sqlc.arg('lim')::int)
    UNION ALL
    SELECT b.first_id + u.k - 1, 'send.' || (u.data ->> 'status'), b.occurred_at, u.data, b.xid
    FROM batches b CROSS JOIN LATERAL unnest(b.data) WITH ORDINALITY AS u (data, k)
    WHERE b.before < sqlc.arg('lim')::int
      AND (cardinality(@types::text[]) = 0 OR 'send.' || (u.data ->> 'status') = ANY(@types::text[]))
) x
ORDER BY x.xid DESC, x.id DESC
LIMIT sqlc.arg('lim')::int;

-- name: EventGetMany :many
-- The events of one delivery. An event past retention is simply missing. An id's
-- batch is the one with the greatest first_id at or below it, if it holds it.
SELECT x.id, x.type, x.occurred_at, x.data FROM (
    SELECT e.id, e.type, e.occurred_at, e.data FROM events e
    WHERE e.account_id = @account_id AND e.id = ANY(@ids::bigint[])
    UNION ALL
    SELECT b.first_id + u.k - 1, 'send.' || (u.data ->> 'status'), b.occurred_at, u.data
    FROM event_batches b CROSS JOIN LATERAL unnest(b.data) WITH ORDINALITY AS u (data, k)
    WHERE b.account_id = @account_id
      AND b.first_id = ANY(ARRAY(
          SELECT DISTINCT f.first_id FROM unnest(@ids::bigint[]) AS i (id)
          CROSS JOIN LATERAL (SELECT c.first_id FROM event_batches c WHERE c.first_id <= i.id
                              ORDER BY c.first_id DESC LIMIT 1) f))
      AND b.first_id + u.k - 1 = ANY(@ids::bigint[])
) x
ORDER BY x.id;

-- name: EventEndpointCreate :one
-- A new endpoint receives what commits from now on: its cursor starts just below
-- the horizon, so an event of a transaction still running is not missed.
INSERT INTO event_endpoints (account_id, url, description, event_types, enabled, batch_size, secret,
                             cursor_xid, cursor_id)
VALUES (@account_id, @url, @description, @event_types::text[], @enabled, @batch_size, @secret,
        pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1, 9223372036854775807)
RETURNING *;

-- name: EventEndpointCreateLock :exec
-- Serialises the endpoint creations of one account, so the cap on endpoints per
-- account holds under concurrent requests (NO KEY UPDATE: other tables' foreign
-- keys to the account are not blocked).
SELECT id FROM accounts WHERE id = @account_id FOR NO KEY UPDATE;

-- name: EventEndpointCount :one
SELECT count(*) FROM event_endpoints WHERE account_id = @account_id;

-- name: EventEndpointList :many
SELECT * FROM event_endpoints
WHERE account_id = @account_id AND id > @after_id
ORDER BY id
LIMIT @lim;

-- name: EventEndpointGet :one
SELECT * FROM event_endpoints WHERE account_id = @account_id AND id = @id;

-- name: EventEndpointUpdate :one
-- Re-enabling clears the reason, and the endpoint's parked deliveries come due in
-- EventDeliveryUnpark (same transaction).
UPDATE event_endpoints SET
    url             = coalesce(sqlc.narg('url'), url),
    description     = coalesce(sqlc.narg('description'), description),
    event_types     = coalesce(sqlc.narg('event_types')::text[], event_types),
    batch_size      = coalesce(sqlc.narg('batch_size'), batch_size),
    enabled         = coalesce(sqlc.narg('enabled'), enabled),
    disabled_reason = CASE WHEN coalesce(sqlc.narg('enabled'), enabled) THEN NULL
                           ELSE coalesce(disabled_reason, 'disabled by the account') END,
    failing_since   = CASE WHEN coalesce(sqlc.narg('enabled'), enabled) AND NOT enabled THEN NULL
                           ELSE failing_since END,
    updated_at      = now()
WHERE account_id = @account_id AND id = @id
RETURNING *;

-- name: EventEndpointDelete :execrows
DELETE FROM event_endpoints WHERE account_id = @account_id AND id = @id;

-- name: EventEndpointRotate :one
-- Compare-and-set on the secret the caller read, as WebhookEndpointRotate.
UPDATE event_endpoints SET secret = @secret, updated_at = now()
WHERE account_id = @account_id AND id = @id AND secret = @current_secret
RETURNING *;

-- name: EventEndpointSecretKeep :exec
-- Keeps a rotated-out secret signing until its expiry, dropping expired ones.
WITH expired AS (
    DELETE FROM event_endpoint_secrets
    WHERE endpoint_id = @endpoint_id AND expires_at <= now()
)
INSERT INTO event_endpoint_secrets (endpoint_id, secret, expires_at)
VALUES (@endpoint_id, @secret, @expires_at);

-- name: EventEndpointPreviousExpiry :one
SELECT max(expires_at)::timestamptz AS expires_at FROM event_endpoint_secrets
WHERE endpoint_id = @endpoint_id AND expires_at > now();

-- name: EventEndpointForDelivery :one
-- What a delivery needs: where, and every secret that signs (the current one, then
-- the rotated-out ones in their grace period, bounded).
SELECT ep.id, ep.account_id, ep.url, ep.enabled, ep.secret,
       coalesce((SELECT array_agg(x.secret ORDER BY x.expires_at DESC) FROM (
           SELECT s.secret, s.expires_at FROM event_endpoint_secrets s
           WHERE s.endpoint_id = ep.id AND s.expires_at > now()
           ORDER BY s.expires_at DESC LIMIT 10) x), '{}')::text[] AS previous
FROM event_endpoints ep
WHERE ep.id = @id;

-- name: EventEndpointsBehind :many
-- Enabled endpoints with committed events past their cursor, in rows or in
-- batches (a batch whose last element is past it): the fan-out's work.
SELECT ep.id FROM event_endpoints ep
WHERE ep.enabled AND (EXISTS (
    SELECT 1 FROM events e
    WHERE e.account_id = ep.account_id
      AND (e.xid, e.id) > (ep.cursor_xid, ep.cursor_id)
      AND e.xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint)
  OR EXISTS (
    SELECT 1 FROM event_batches b
    WHERE b.account_id = ep.account_id
      AND (b.xid, b.first_id) > (ep.cursor_xid, ep.cursor_id - 1024)
      AND (b.xid, b.first_id + b.n - 1) > (ep.cursor_xid, ep.cursor_id)
      AND b.xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint))
ORDER BY ep.id
LIMIT 1000;

-- name: EventEndpointLockForFanout :one
-- One replica fans out one endpoint at a time: the others skip it.
SELECT id, account_id, event_types, batch_size, cursor_xid, cursor_id
FROM event_endpoints
WHERE id = @id AND enabled
FOR UPDATE SKIP LOCKED;

-- name: EventFanoutPick :many
-- The next events past an endpoint's cursor, with their size for batching; rows
-- and batches merged as EventListAfter does.
WITH batches AS (
    SELECT b.first_id, b.xid, b.data,
           coalesce(sum(CASE WHEN (b.xid, b.first_id) <= (@cursor_xid::bigint, @cursor_id::bigint) THEN 0 ELSE b.n END)
                    OVER (ORDER BY b.xid, b.first_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM (SELECT b.first_id, b.xid, b.n, b.data FROM event_batches b
          WHERE b.account_id = @account_id
            AND (b.xid, b.first_id) > (@cursor_xid::bigint, sqlc.arg('cursor_id')::bigint - 1024)
            AND b.xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
          ORDER BY b.xid, b.first_id
          LIMIT sqlc.arg('lim')::int + 1) b
)
SELECT x.id, x.xid, x.type, x.size FROM (
    (SELECT e.id, e.xid, e.type, octet_length(e.data::text)::int AS size FROM events e
     WHERE e.account_id = @account_id
       AND (e.xid, e.id) > (@cursor_xid::bigint, @cursor_id::bigint)
       AND e.xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
     ORDER BY e.xid, e.id
     LIMIT sqlc.arg('lim')::int)
    UNION ALL
    SELECT b.first_id + u.k - 1, b.xid, 'send.' || (u.data ->> 'status'), octet_length(u.data::text)
    FROM batches b CROSS JOIN LATERAL unnest(b.data) WITH ORDINALITY AS u (data, k)
    WHERE b.before < sqlc.arg('lim')::int
      AND (b.xid, b.first_id + u.k - 1) > (@cursor_xid::bigint, @cursor_id::bigint)
) x
ORDER BY x.xid, x.id
LIMIT sqlc.arg('lim')::int;

-- name: EventDeliveryInsertGroups :exec
-- One delivery per group number: event_ids[i] goes into delivery groups[i].
INSERT INTO event_deliveries (account_id, endpoint_id, event_ids, batch)
SELECT @account_id::bigint, @endpoint_id::bigint, array_agg(u.event_id ORDER BY u.event_id), bool_or(u.batch)
FROM (
    SELECT unnest(@event_ids::bigint[]) AS event_id, unnest(@groups::int[]) AS grp,
           unnest(@batches::bool[]) AS batch
) AS u
GROUP BY u.grp
ORDER BY u.grp;

-- name: EventEndpointAdvance :exec
UPDATE event_endpoints SET cursor_xid = @cursor_xid, cursor_id = @cursor_id WHERE id = @id;

-- name: EventEndpointRewind :execrows
-- Redelivery of everything since a time: the fan-out cursor moves back to the first
-- transaction that wrote an event at or after @since (never forward), so the same
-- machinery posts them again, batched as configured.
UPDATE event_endpoints ep
SET cursor_xid = f.xid, cursor_id = 0, updated_at = now()
FROM (SELECT least((SELECT min(e.xid) FROM events e WHERE e.account_id = @account_id AND e.occurred_at >= @since),
                   (SELECT min(b.xid) FROM event_batches b
                    WHERE b.account_id = @account_id AND b.occurred_at >= @since)) AS xid) f
WHERE ep.account_id = @account_id AND ep.id = @id AND f.xid IS NOT NULL
  AND (f.xid, 0::bigint) < (ep.cursor_xid, ep.cursor_id);

-- name: EventDeliveryInsertOne :one
-- Redelivery of one event of the account to one of its endpoints.
INSERT INTO event_deliveries (account_id, endpoint_id, event_ids)
SELECT ep.account_id, ep.id, ARRAY[@event_id::bigint]
FROM event_endpoints ep
WHERE ep.account_id = @account_id AND ep.id = @endpoint_id
  AND (EXISTS (SELECT 1 FROM events e WHERE e.account_id = @account_id AND e.id = @event_id::bigint)
       OR EXISTS (SELECT 1 FROM (SELECT c.account_id, c.first_id, c.n FROM event_batches c
                                 WHERE c.first_id <= @event_id::bigint ORDER BY c.first_id DESC LIMIT 1) b
                  WHERE b.account_id = @account_id AND @event_id::bigint < b.first_id + b.n))
RETURNING id;

-- name: EventClaimEndpoints :many
-- The first statement of a claim (EventDeliveryClaim is the second, in the same
-- transaction): up to @n enabled endpoints with a due delivery and a free slot,
-- locked so that no other claimer serves them until this claim commits. The lock
-- is what makes the per-endpoint cap hold across replicas: the second statement
-- starts after it, so its snapshot sees every claim committed on these endpoints
-- (one statement alone counts in-flight rows in a snapshot older than its locks,
-- and two replicas could each fill the cap). Order: round-robin, one endpoint per
-- account per round (rank within the account by when it was last served), the
-- longest-waiting first, so one tenant's backlog cannot take every slot.
-- NO KEY UPDATE: inserting deliveries (a foreign key's KEY SHARE) is not blocked.
-- A delivery is in flight while its lease runs and its executor is alive (see
-- EventDeliveryClaim); one of a dead executor is due at once.
WITH cand AS (
    SELECT ep.id, ep.last_claimed_at,
           row_number() OVER (PARTITION BY ep.account_id ORDER BY ep.last_claimed_at NULLS FIRST, ep.id) AS rnk
    FROM event_endpoints ep
    WHERE ep.enabled
      -- A suspended (or deleted) account's deliveries wait until it is resumed.
      AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = ep.account_id
                  AND a.suspended_at IS NULL AND a.deleted_at IS NULL)
      -- Two probes, each on its own index: a due row, or a row of a dead executor.
      AND (EXISTS (
               SELECT 1 FROM event_deliveries d
               WHERE d.endpoint_id = ep.id AND d.status IN ('pending', 'delivering')
                 AND d.next_attempt_at <= coalesce(sqlc.narg('now')::timestamptz, now()))
           OR (@check_liveness::bool AND EXISTS (
               SELECT 1 FROM event_deliveries d
               WHERE d.endpoint_id = ep.id AND d.status = 'delivering'
                 AND d.executor_id IS NOT NULL AND d.executor_id IS DISTINCT FROM sqlc.narg('self')::bigint
                 AND NOT EXISTS (
                     SELECT 1 FROM executors x WHERE x.id = d.executor_id
                       AND x.heartbeat_at >= coalesce(sqlc.narg('now')::timestamptz, now()) - @dead_after::interval))))
      AND (SELECT count(*) FROM event_deliveries x
           WHERE x.endpoint_id = ep.id AND x.status = 'delivering'
             AND x.next_attempt_at > coalesce(sqlc.narg('now')::timestamptz, now())
             AND (NOT @check_liveness::bool OR x.executor_id IS NULL
                  OR x.executor_id IS NOT DISTINCT FROM sqlc.narg('self')::bigint
                  OR EXISTS (
                      SELECT 1 FROM executors e WHERE e.id = x.executor_id
                        AND e.heartbeat_at >= coalesce(sqlc.narg('now')::timestamptz, now()) - @dead_after::interval))
          ) < sqlc.arg('per_endpoint')::int
)
SELECT ep.id FROM event_endpoints ep
JOIN cand c ON c.id = ep.id
ORDER BY c.rnk, c.last_claimed_at NULLS FIRST, c.id
LIMIT sqlc.arg('n')::int
FOR NO KEY UPDATE OF ep SKIP LOCKED;

-- name: EventDeliveryClaim :many
-- The second statement of a claim: due deliveries of the endpoints
-- EventClaimEndpoints locked (@endpoint_ids, in its order), at most @per_endpoint
-- in flight per endpoint counting those already in flight, shared out round-robin
-- (each endpoint's oldest first, then each one's second…) up to @n. A delivery is
-- in flight while its lease (next_attempt_at) runs and, when @check_liveness is
-- set, the executor that claimed it still beats (executors, dead after
-- @dead_after): a killed process's deliveries are free after three missed
-- heartbeats, not after the lease; the lease remains the bound for a process alive
-- but frozen, and for claims without an executor. Each claim counts in attempts
-- (the fence of EventDeliveryRecord), not in failures (the retry schedule), and is
-- stamped with the claimer (@self). Deliveries of a disabled endpoint are parked at
-- the end of time (EventDeliveryPark).
WITH ep AS (
    SELECT e.id, e.ord,
           greatest(sqlc.arg('per_endpoint')::int - (
               SELECT count(*) FROM event_deliveries x
               WHERE x.endpoint_id = e.id AND x.status = 'delivering'
                 AND x.next_attempt_at > coalesce(sqlc.narg('now')::timestamptz, now())
                 AND (NOT @check_liveness::bool OR x.executor_id IS NULL
                      OR x.executor_id IS NOT DISTINCT FROM sqlc.narg('self')::bigint
                      OR EXISTS (
                          SELECT 1 FROM executors xe WHERE xe.id = x.executor_id
                            AND xe.heartbeat_at >= coalesce(sqlc.narg('now')::timestamptz, now()) - @dead_after::interval))
           ), 0)::int AS free
    FROM unnest(@endpoint_ids::bigint[]) WITH ORDINALITY AS e(id, ord)
), due_rows AS (
    -- Due rows, oldest first: a range of the due index, so rows scheduled later
    -- (perhaps a long backlog) are never read.
    SELECT d.id, d.endpoint_id, d.next_attempt_at
    FROM ep CROSS JOIN LATERAL (
        SELECT d.id, d.endpoint_id, d.next_attempt_at FROM event_deliveries d
        WHERE d.endpoint_id = ep.id AND d.status IN ('pending', 'delivering')
          AND d.next_attempt_at <= coalesce(sqlc.narg('now')::timestamptz, now())
        ORDER BY d.next_attempt_at, d.id
        LIMIT ep.free
        FOR UPDATE SKIP LOCKED
    ) d
), dead_rows AS (
    -- Rows in flight for an executor that stopped beating (few: in flight).
    SELECT d.id, d.endpoint_id, d.next_attempt_at
    FROM ep CROSS JOIN LATERAL (
        SELECT d.id, d.endpoint_id, d.next_attempt_at FROM event_deliveries d
        WHERE @check_liveness::bool AND d.endpoint_id = ep.id AND d.status = 'delivering'
          AND d.next_attempt_at > coalesce(sqlc.narg('now')::timestamptz, now())
          AND d.executor_id IS NOT NULL AND d.executor_id IS DISTINCT FROM sqlc.narg('self')::bigint
          AND NOT EXISTS (
              SELECT 1 FROM executors x WHERE x.id = d.executor_id
                AND x.heartbeat_at >= coalesce(sqlc.narg('now')::timestamptz, now()) - @dead_after::interval)
        ORDER BY d.next_attempt_at, d.id
        LIMIT ep.free
        FOR UPDATE SKIP LOCKED
    ) d
), due AS (
    SELECT u.id, u.endpoint_id, ep.ord, ep.free,
           row_number() OVER (PARTITION BY u.endpoint_id ORDER BY u.next_attempt_at, u.id) AS k
    FROM (SELECT * FROM due_rows UNION ALL SELECT * FROM dead_rows) u
    JOIN ep ON ep.id = u.endpoint_id
), picked AS (
    SELECT due.id, due.endpoint_id FROM due WHERE due.k <= due.free
    ORDER BY due.k, due.ord LIMIT sqlc.arg('n')::int
), served AS (
    UPDATE event_endpoints SET last_claimed_at = coalesce(sqlc.narg('now')::timestamptz, now())
    WHERE id IN (SELECT endpoint_id FROM picked)
)
UPDATE event_deliveries d
SET status = 'delivering', attempts = d.attempts + 1, executor_id = sqlc.narg('self')::bigint,
    next_attempt_at = coalesce(sqlc.narg('now')::timestamptz, now()) + sqlc.arg('lease')::interval,
    last_attempt_at = coalesce(sqlc.narg('now')::timestamptz, now())
FROM picked p
WHERE d.id = p.id
RETURNING d.id, d.account_id, d.endpoint_id, d.event_ids, d.batch, d.attempts, d.failures, d.created_at;

-- name: EventDeliveryRecord :execrows
-- The outcome of one attempt, fenced on the claim's attempts so a claimer whose
-- lease ran out (or who was declared dead) cannot overwrite the attempt that
-- replaced it. status is delivered, pending (retry at @next_attempt_at) or failed;
-- failures is the count that moves the retry schedule (a failure that named its
-- own Retry-After does not add to it).
UPDATE event_deliveries
SET status           = @status,
    next_attempt_at  = coalesce(sqlc.narg('next_attempt_at')::timestamptz, next_attempt_at),
    failures         = @failures,
    last_status_code = sqlc.narg('status_code'),
    last_error       = sqlc.narg('error'),
    last_latency_ms  = @latency_ms,
    delivered_at     = CASE WHEN @status = 'delivered' THEN coalesce(sqlc.narg('now')::timestamptz, now()) END
WHERE id = @id AND attempts = @attempts AND status = 'delivering';

-- name: EventEndpointHealth :one
-- Records whether an attempt succeeded: a success ends the endpoint's failing run,
-- a failure starts one (or keeps its start). Returns when the run began; no row
-- for a success on a healthy endpoint, which writes nothing.
UPDATE event_endpoints
SET failing_since = CASE WHEN @ok::bool THEN NULL
                         ELSE coalesce(failing_since, coalesce(sqlc.narg('now')::timestamptz, now())) END
WHERE id = @id AND (NOT @ok::bool OR failing_since IS NOT NULL)
RETURNING failing_since;

-- name: EventEndpointDisable :one
-- enabled → disabled, once; the caller records endpoint.disabled in the same
-- transaction only when this returns a row.
UPDATE event_endpoints
SET enabled = false, disabled_reason = @reason, updated_at = now()
WHERE id = @id AND enabled
RETURNING id, account_id, url;

-- name: EventDeliveryPark :exec
-- A disabled endpoint's pending deliveries wait at the end of time, out of the
-- claim's way (a finite date: pgx cannot scan 'infinity' into a time).
UPDATE event_deliveries SET next_attempt_at = '9999-12-31 00:00:00+00'
WHERE endpoint_id = @endpoint_id AND status = 'pending';

-- name: EventDeliveryUnpark :exec
UPDATE event_deliveries SET next_attempt_at = now()
WHERE endpoint_id = @endpoint_id AND status = 'pending' AND next_attempt_at >= '9999-01-01 00:00:00+00';

-- name: EventDeliveryList :many
-- The endpoint's delivery log, newest first.
SELECT id, event_ids, batch, status, attempts, next_attempt_at, last_status_code, last_error,
       last_latency_ms, last_attempt_at, delivered_at, created_at
FROM event_deliveries
WHERE account_id = @account_id AND endpoint_id = @endpoint_id
  AND (@before_id::bigint = 0 OR id < @before_id::bigint)
ORDER BY id DESC
LIMIT @lim;

-- name: EventDeliveryOldest :many
-- The oldest undelivered delivery per endpoint, for the age gauge.
SELECT endpoint_id, min(created_at)::timestamptz AS oldest
FROM event_deliveries
WHERE status IN ('pending', 'delivering')
GROUP BY endpoint_id;

-- name: EventStreamTokenCreate :exec
INSERT INTO event_stream_tokens (token_sha256, account_id, api_key_id, session_id, expires_at)
VALUES (@token_sha256, @account_id, @api_key_id, sqlc.narg('session_id'), @expires_at);

-- name: EventStreamTokenAccount :one
-- A token is valid until it expires, while the key that minted it is not revoked
-- (tokens minted before keys were recorded have none, and expire soon) and while
-- the dashboard session that minted it lasts (signing out deletes the token).
SELECT t.account_id, t.api_key_id, t.session_id FROM event_stream_tokens t
WHERE t.token_sha256 = @token_sha256 AND t.expires_at > coalesce(sqlc.narg('now')::timestamptz, now())
  AND (t.api_key_id IS NULL OR EXISTS (
      SELECT 1 FROM api_keys k WHERE k.id = t.api_key_id AND k.account_id = t.account_id AND k.revoked_at IS NULL))
  AND (t.session_id IS NULL OR EXISTS (
      SELECT 1 FROM dashboard_sessions s
      WHERE s.id = t.session_id AND s.expires_at > coalesce(sqlc.narg('now')::timestamptz, now())))
  AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = t.account_id AND a.suspended_at IS NULL AND a.deleted_at IS NULL);

-- name: EventPurge :execrows
-- Retention, in bounded batches: events, then deliveries, older than @before.
DELETE FROM events WHERE id IN (
    SELECT e.id FROM events e WHERE e.occurred_at < sqlc.arg('before')::timestamptz ORDER BY e.occurred_at LIMIT 5000);

-- name: EventBatchPurge :execrows
-- Retention of event batches as of events (up to 100 batches: 100 acknowledgements).
DELETE FROM event_batches WHERE first_id IN (
    SELECT b.first_id FROM event_batches b WHERE b.occurred_at < sqlc.arg('before')::timestamptz
    ORDER BY b.occurred_at LIMIT 100);

-- name: EventDeliveryPurge :execrows
DELETE FROM event_deliveries WHERE id IN (
    SELECT d.id FROM event_deliveries d WHERE d.created_at < sqlc.arg('before')::timestamptz ORDER BY d.created_at LIMIT 5000);

-- name: EventStreamTokenPurge :exec
DELETE FROM event_stream_tokens WHERE expires_at < now();

-- name: EventListOfCampaign :many
-- A campaign's lifecycle events (campaign.*), newest first, through
-- events_campaign_idx; its per-recipient outcomes are its sends.
SELECT id, type, occurred_at, data FROM events
WHERE account_id = @account_id AND type LIKE 'campaign.%'
  AND data ->> 'campaign_id' = sqlc.arg('campaign_id')::bigint::text
ORDER BY id DESC
LIMIT @lim;

-- name: EventDeliveryReleaseLost :execrows
-- Hands back the deliveries of claims whose answer this worker never saw: the
-- claim committed but its connection died before the answer came back, as when
-- the primary fails. They are stamped with one of this process's executor ids,
-- which still beats, so no claimer judges them dead and the worker's own claims
-- skip them: they would wait for their whole lease. The worker runs this only
-- while it holds nothing (no claim under way, every delivery it was handed
-- recorded), so every 'delivering' row stamped with one of its ids is such a row
-- and was never posted. It is due again at once with its attempt uncharged: the
-- lost claim has no recorder, and attempts stays the fence of EventDeliveryRecord.
-- lease_from_in_us bounds the rows to those whose lease began no earlier than the
-- failed claim (less a margin), as SendReleaseLost does: an offset from now on the
-- database's clock, which stamped the lease (liveness.LostClaims.LeaseFromIn).
UPDATE event_deliveries
SET status = 'pending', attempts = greatest(attempts - 1, 0), executor_id = NULL,
    next_attempt_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE status = 'delivering' AND executor_id = ANY(@executor_ids::bigint[])
  AND next_attempt_at >= coalesce(sqlc.narg('now')::timestamptz, now()) + sqlc.arg('lease_from_in_us')::bigint * interval '1 microsecond';
