-- The per-recipient rows of a campaign: claim, acknowledge, rescue (the build is
-- CampaignBuildInsert, in campaigns.sql).

-- name: SendClaimBatch :many
-- One statement claims a disjoint batch (SKIP LOCKED) of one campaign's due rows,
-- oldest due first: (next_attempt_at, id) is an order only the partial index
-- sends_claim_idx yields, so the plan cannot drift to the primary key plus a filter
-- (migration 00030); fresh rows are due at -infinity, so they go out in id order. Rows whose
-- address is now suppressed, or whose subscriber is no longer confirmed (or was
-- deleted), are MARKED suppressed here rather than filtered out: a filtered row would
-- stay queued at the head of the index and every later claim would walk over it
-- again (DESIGN.md §4). The campaign guard makes pause and cancel stop new claims,
-- and the account's suspension (or deletion) too.
-- lease_until comes back so a worker never starts a send its lease cannot cover.
-- after_id is the caller's cursor through the fresh rows (due at -infinity): the
-- index scan starts past the ids it already claimed instead of walking the entries
-- those claims left dead at the head of the index until vacuum removes them, which
-- on a large campaign is most of the claim's work. Retried rows (due at a real
-- time) are always after the cursor. A caller passes 0 to scan from the start, and
-- must do so before it concludes that nothing is left (a released row can sit
-- behind its cursor).
-- executor_id stamps the claim with the claiming process, so the rescuer can take
-- the rows back within seconds of that process's death (SendRescueExpired).
-- The suppressed rows' send.suppressed events are written by the same statement.
-- picked takes the columns the judgement needs from the locked row itself (they
-- never change), and judged is MATERIALIZED so the suppression check runs once per
-- row, not once per column of the UPDATE that reads its verdict.
-- The executor runs this statement on a generic plan (ClaimPlanGeneric, sent with
-- it in one round trip): a custom plan costs 0.25-0.3 ms of planning per claim once
-- the statistics know a large campaign. Every lookup per picked row is therefore a
-- LATERAL ... LIMIT 1 probe: a generic plan estimates LIMIT @n as a tenth of the
-- campaign's queued rows, and with a plain join or EXISTS it hashes the whole
-- subscribers (or suppressions) table for fifty rows (TestClaimPlanRightAfterBuild).
-- Exclusions re-checked here (DESIGN.md §3): a suppressed address, a subscriber
-- no longer confirmed, and left_list, which an opt-out sets on the rows of every
-- list it left (SendSuppressLeftLists) whatever their state: a row in flight then
-- that came back to queued (a release, a retry, a rescue) is not sent. A flag on
-- the row, not a join to list_members, keeps the claim as cheap as before.
-- The route the rows are sent through (the caller's: via_sender_id NULL for the
-- environment's provider) is recorded on them for the rescuer. A row in doubt (a
-- send of it may have been delivered) is replayed only through the route recorded
-- on it: through another one (its sender changed or was deleted since) it would be
-- a second copy nobody can recognise, so unless the campaign accepted that risk
-- (retry_ambiguous) it becomes unknown here, with its send.unknown event.
WITH picked AS (
    SELECT s.id, s.account_id, s.subscriber_id, s.email_lower, s.left_list,
           (s.in_doubt AND NOT @retry_ambiguous::bool
            AND (s.via_sender_id IS DISTINCT FROM sqlc.narg('via_sender_id')::bigint
                 OR s.via_provider IS DISTINCT FROM @via_provider::text)) AS rerouted
    FROM sends s
    WHERE s.campaign_id = @campaign_id
      AND s.status = 'queued'
      AND (s.next_attempt_at, s.id) > ('-infinity'::timestamptz, @after_id::bigint)
      AND s.next_attempt_at <= coalesce(sqlc.narg('now')::timestamptz, now())
      -- One probe per claim, not per row (an InitPlan): a suspended or deleted
      -- account's rows stay queued where they are until it is resumed.
      -- The account by a LATERAL lookup, not a join: ClaimPlanGeneric turns nested
      -- loops off, and a join would hash the whole accounts table.
      AND EXISTS (SELECT 1 FROM campaigns c CROSS JOIN LATERAL (
                      SELECT 1 FROM accounts a
                      WHERE a.id = c.account_id AND a.suspended_at IS NULL AND a.deleted_at IS NULL
                      LIMIT 1) a
                  WHERE c.id = @campaign_id AND c.status = 'sending')
    ORDER BY s.next_attempt_at, s.id
    LIMIT @n
    FOR UPDATE OF s SKIP LOCKED
), judged AS MATERIALIZED (
    SELECT p.id, sub.name, sub.attributes, p.left_list, p.rerouted,
           (p.left_list OR sub.id IS NULL OR x.suppressed IS NOT NULL) AS blocked
    FROM picked p
    LEFT JOIN LATERAL (
        SELECT sb.id, sb.name, sb.attributes FROM subscribers sb
        WHERE sb.id = p.subscriber_id AND sb.status = 'confirmed'
        LIMIT 1) sub ON true
    LEFT JOIN LATERAL (
        SELECT true AS suppressed FROM suppressions x
        WHERE x.account_id = p.account_id AND x.email_lower = p.email_lower
        LIMIT 1) x ON true
), claimed AS (
    UPDATE sends s
    SET status      = CASE WHEN j.blocked THEN 'suppressed' WHEN j.rerouted THEN 'unknown' ELSE 'sending' END,
        lease_until = CASE WHEN j.blocked OR j.rerouted THEN NULL
                           ELSE coalesce(sqlc.narg('now')::timestamptz, now()) + @lease::interval END,
        attempts    = CASE WHEN j.blocked OR j.rerouted THEN s.attempts ELSE s.attempts + 1 END,
        executor_id = CASE WHEN j.blocked OR j.rerouted THEN s.executor_id ELSE sqlc.narg('executor_id')::bigint END,
        via_sender_id  = CASE WHEN j.blocked OR j.rerouted THEN s.via_sender_id ELSE sqlc.narg('via_sender_id')::bigint END,
        via_provider   = CASE WHEN j.blocked OR j.rerouted THEN s.via_provider ELSE @via_provider::text END,
        via_idempotent = CASE WHEN j.blocked OR j.rerouted THEN s.via_idempotent ELSE @via_idempotent::bool END,
        last_error  = CASE WHEN j.rerouted AND NOT j.blocked
                           THEN 'not replayed: an earlier send may have been delivered through ' ||
                                coalesce('sender ' || s.via_sender_id, 'the default provider') ||
                                ', which no longer sends this campaign' ELSE s.last_error END,
        updated_at  = coalesce(sqlc.narg('now')::timestamptz, now())
    FROM judged j
    -- The ids again as an index condition: whichever side of the join the plan puts
    -- sends on, it is looked up by these ids, never scanned whole (ClaimPlanGeneric).
    WHERE s.id = j.id AND s.id = ANY(ARRAY(SELECT p.id FROM picked p))
    RETURNING s.id, s.account_id, s.campaign_id, s.subscriber_id, s.email, s.job_id, s.status, s.attempts,
              s.lease_until, s.executor_id, coalesce(j.name, '')::text AS name,
              coalesce(j.attributes, '{}')::jsonb AS attributes, j.left_list, s.last_error, s.variant
), settled_events AS (
    -- send.suppressed (with reason left_list when so) and send.unknown for the rows
    -- settled here, in this statement (events.sql).
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT c.account_id, 'send.' || c.status, coalesce(sqlc.narg('now')::timestamptz, now()),
           jsonb_build_object('campaign_id', c.campaign_id, 'send_id', c.id, 'subscriber_id', c.subscriber_id,
                              'email', c.email, 'status', c.status)
           || CASE WHEN c.status = 'suppressed' AND c.left_list THEN '{"reason": "left_list"}'::jsonb
                   WHEN c.status = 'unknown' THEN jsonb_build_object('attempts', c.attempts, 'error', c.last_error)
                   ELSE '{}'::jsonb END
    FROM claimed c
    WHERE c.status IN ('suppressed', 'unknown')
), settled_counted AS (
    -- The same rows in the campaign's kept status counts (campaign_status_counts).
    -- One claim is of one campaign: a plain aggregate, no grouping (the plan test
    -- holds the claim free of any sort).
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT @campaign_id, x.account_id, v.status, v.n
    FROM (SELECT min(c.account_id) AS account_id,
                 count(*) FILTER (WHERE c.status = 'suppressed') AS suppressed,
                 count(*) FILTER (WHERE c.status = 'unknown') AS unknown
          FROM claimed c) x
    CROSS JOIN LATERAL (VALUES ('suppressed', x.suppressed), ('unknown', x.unknown)) v (status, n)
    WHERE v.n > 0
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
SELECT c.id, c.account_id, c.subscriber_id, c.email, c.job_id, c.status, c.attempts, c.lease_until,
       c.executor_id, c.name, c.attributes, c.variant
FROM claimed c;

-- name: SendAckMany :one
-- The completer's coalesced acknowledgement: one statement for every outcome of a
-- few milliseconds of sends across all workers. Each result carries the attempts
-- its claim set; a claim bumps attempts, so a match means nobody claimed the row
-- since. That fence keeps a late ack off another worker's (or replica's) claim.
--
-- A result never moves a row or a campaign backwards (DESIGN.md §4):
--   - while the row is still 'sending' on this claim, every outcome applies;
--   - once the row left the claim (the rescuer settled it as queued, unknown or
--     failed, e.g. when a database outage held the ack past the lease) only 'sent'
--     applies: the worker knows the delivery the rescuer had to guess, and nothing
--     else is sure enough to undo the rescuer's decision;
--   - so a retry ('queued') only ever lands on a row still 'sending', whose campaign
--     cannot be 'sent' (CampaignFinish waits for sending rows); in a cancelled
--     campaign the row is closed as 'cancelled' instead. No result re-opens work in
--     a finished campaign.
-- The campaigns of retried rows are read FOR SHARE: a cancel committing meanwhile
-- is seen (the lock waits for it and re-reads the row), and a cancel that starts
-- later waits for this statement, so its own sweep of queued rows sees ours.
-- Cancelled and suppressed rows keep their state.
-- The same statement writes the per-recipient events (send.sent, send.failed,
-- send.unknown; a retry writes none, each naming the sender recorded on the row:
-- the route the send took) into the outbox, so they commit with the ack
-- and cost no round trip of their own. The count is of acknowledged rows.
-- It also adds the rows it made 'sent' to the report counters (campaign_counts per
-- recipient domain, account_day_counts per day and kind): one grouped upsert each
-- per acknowledgement, in key order so two replicas' acks never deadlock. A row
-- becomes 'sent' once (no statement moves it out of 'sent'), so it counts once.
-- Rows it moves into or out of failed, unknown or cancelled adjust
-- campaign_status_counts (status_before: the status the update found); an ack of
-- only 'sent' rows from 'sending' writes nothing there.
-- doubts marks the retries of an ambiguous answer (the provider may have taken
-- the message): the row is then in_doubt, replayed only through its recorded route.
-- retry_in_us is how long a retried row waits, from now on the database's clock
-- (the claim compares next_attempt_at with that clock): the executor's own clock
-- may be off from it, so it sends the wait, never a time of its own.
WITH u AS (
    -- Set-returning functions in one select list zip element by element (PostgreSQL 10+).
    SELECT unnest(@ids::bigint[]) AS id, unnest(@attempts::int[]) AS attempts,
           unnest(@statuses::text[]) AS status,
           unnest(@provider_ids::text[]) AS provider_id, unnest(@errors::text[]) AS error,
           unnest(@retry_in_us::bigint[]) AS retry_in_us, unnest(@doubts::bool[]) AS doubt
), retried AS (
    -- campaigns by their ids (an index condition, not a join: SendPlanLinear).
    SELECT c.id, c.status FROM campaigns c
    WHERE c.id = ANY(ARRAY(SELECT s.campaign_id FROM u CROSS JOIN LATERAL (
                       SELECT s.campaign_id FROM sends s WHERE s.id = u.id LIMIT 1) s
                   WHERE u.status = 'queued'))
    FOR SHARE
), acked AS (
UPDATE sends s
SET status              = CASE WHEN u.status = 'queued'
                                    AND (SELECT r.status FROM retried r WHERE r.id = s.campaign_id) = 'cancelled'
                               THEN 'cancelled' ELSE u.status END,
    provider_message_id = coalesce(nullif(u.provider_id, ''), s.provider_message_id),
    last_error          = nullif(u.error, ''),
    next_attempt_at     = CASE WHEN u.status = 'queued'
                               THEN coalesce(sqlc.narg('now')::timestamptz, now()) + u.retry_in_us * interval '1 microsecond'
                               ELSE s.next_attempt_at END,
    in_doubt            = s.in_doubt OR coalesce(u.doubt, false),
    sent_at             = CASE WHEN u.status = 'sent' THEN coalesce(sqlc.narg('now')::timestamptz, now()) END,
    lease_until         = NULL,
    status_before       = s.status,
    updated_at          = coalesce(sqlc.narg('now')::timestamptz, now())
FROM u
-- s.id = ANY(ids): whichever side of the join the plan puts sends on, it is looked
-- up by the acknowledged ids, never scanned whole (SendPlanIndexed).
WHERE s.id = u.id AND s.attempts = u.attempts AND s.id = ANY(@ids::bigint[])
  AND (s.status = 'sending' OR (u.status = 'sent' AND s.status IN ('queued', 'unknown', 'failed')))
RETURNING s.id, s.account_id, s.campaign_id, s.subscriber_id, s.email, s.email_lower, s.status, s.attempts,
          s.provider_message_id, s.last_error, s.job_id, s.status_before, s.via_sender_id
), status_counted AS (
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT a.campaign_id, a.account_id, v.status, sum(v.d) FROM acked a
    CROSS JOIN LATERAL (VALUES (a.status, 1), (a.status_before, -1)) v (status, d)
    WHERE a.status <> a.status_before AND v.status IN ('failed', 'unknown', 'suppressed', 'cancelled')
    GROUP BY 1, 2, 3 ORDER BY 1, 3
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
), sent_by_domain AS (
    INSERT INTO campaign_counts (campaign_id, account_id, domain, sent)
    SELECT a.campaign_id, a.account_id, substring(a.email_lower FROM '[^@]*$'), count(*)
    FROM acked a WHERE a.status = 'sent'
    GROUP BY 1, 2, 3 ORDER BY 1, 3
    ON CONFLICT (campaign_id, domain) DO UPDATE SET sent = campaign_counts.sent + excluded.sent
), sent_by_day AS (
    INSERT INTO account_day_counts (account_id, day, kind, sent)
    SELECT a.account_id, (coalesce(sqlc.narg('now')::timestamptz, now()) AT TIME ZONE 'UTC')::date, c.kind, count(*)
    FROM acked a CROSS JOIN LATERAL (SELECT c.kind FROM campaigns c WHERE c.id = a.campaign_id LIMIT 1) c
    WHERE a.status = 'sent'
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (account_id, day, kind) DO UPDATE SET sent = account_day_counts.sent + excluded.sent
), outcome AS (
    -- A transactional message's row keeps the message id in subscriber_id: its
    -- event names it message_id (and no subscriber), by the row's job id form.
    SELECT a.account_id, a.id, 'send.' || a.status AS type,
           jsonb_build_object('campaign_id', a.campaign_id, 'send_id', a.id,
                              'email', a.email, 'status', a.status, 'attempts', a.attempts,
                              'provider_message_id', a.provider_message_id, 'error', left(a.last_error, 500),
                              'sender_id', a.via_sender_id)
           || CASE WHEN a.job_id LIKE 'message:%' THEN jsonb_build_object('message_id', a.subscriber_id)
                   ELSE jsonb_build_object('subscriber_id', a.subscriber_id) END AS data,
           -- Batches of at most 1024 (an id window) per account, in send id order.
           (row_number() OVER (PARTITION BY a.account_id ORDER BY a.id) - 1) / 1024 AS chunk
    FROM acked a
    WHERE a.status IN ('sent', 'failed', 'unknown')
), batched AS (
    -- One event_batches row per account (and 1,024 outcomes) once every registered
    -- executor reads them; a row per event while one does not (an older release
    -- beside this one: 00840_event_batches.sql).
    SELECT NOT EXISTS (SELECT 1 FROM executors x WHERE NOT x.reads_event_batches) AS yes
), outcome_batches AS (
    INSERT INTO event_batches (first_id, account_id, occurred_at, n, types, data)
    SELECT nextval('events_id_seq'), o.account_id, coalesce(sqlc.narg('now')::timestamptz, now()), count(*),
           array_agg(DISTINCT o.type ORDER BY o.type), array_agg(o.data ORDER BY o.id)
    FROM outcome o
    WHERE (SELECT b.yes FROM batched b)
    GROUP BY o.account_id, o.chunk
    ORDER BY o.account_id, o.chunk
), outcome_events AS (
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT o.account_id, o.type, coalesce(sqlc.narg('now')::timestamptz, now()), o.data
    FROM outcome o
    WHERE NOT (SELECT b.yes FROM batched b)
    ORDER BY o.account_id, o.id
)
SELECT count(*) FROM acked;

-- name: SendReleaseMany :one
-- Hands claimed rows that were never given to the provider back to the queue (at
-- shutdown, or when a lease ran too short to start the send); the attempt they were
-- charged did not happen. Fenced like SendAckMany on the claim's attempts, so a
-- release can only touch its own claim, never another replica's live one. A row
-- the rescuer settled meanwhile (queued, unknown) goes back to the queue too, as it
-- was never sent, but only while its campaign is sending or paused: a finished
-- campaign is never re-opened. In a cancelled campaign a released row is closed.
-- The campaigns are read FOR SHARE, so a concurrent finish or cancel is either
-- seen here or sees this statement's rows (CampaignLockSending).
-- A row held back by the pacing of its domain or its sender's warm-up
-- (internal/executor/pacing.go) is released the same way, due no sooner than
-- @wait_us microseconds from the database's now (the process's clock may be
-- skewed: it sends the wait, not a time); a negative wait (every other row)
-- leaves next_attempt_at as it is, '-infinity' included.
-- The rows are looked up by their ids and the campaigns by theirs, and the
-- executor runs this on SendPlanLinear's setting, as SendAckMany (a release of
-- every row a pacing hold kept back is as large as a claim, and as frequent):
-- TestReleasePlanLinearInItsRows.
WITH u AS (
    SELECT unnest(@ids::bigint[]) AS id, unnest(@attempts::int[]) AS attempts,
           unnest(@wait_us::bigint[]) AS wait_us
), camp AS (
    SELECT c.id, c.status FROM campaigns c
    WHERE c.id = ANY(ARRAY(SELECT s.campaign_id FROM u CROSS JOIN LATERAL (
                       SELECT s.campaign_id FROM sends s WHERE s.id = u.id LIMIT 1) s))
    FOR SHARE
), released AS (
UPDATE sends s
SET status = CASE WHEN (SELECT c.status FROM camp c WHERE c.id = s.campaign_id) = 'cancelled'
                  THEN 'cancelled' ELSE 'queued' END,
    lease_until = NULL, attempts = greatest(s.attempts - 1, 0), status_before = s.status,
    next_attempt_at = CASE WHEN u.wait_us < 0 THEN s.next_attempt_at
                           ELSE greatest(s.next_attempt_at, coalesce(sqlc.narg('now')::timestamptz, now())
                                                            + u.wait_us * interval '1 microsecond') END,
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
FROM u
WHERE s.id = u.id AND s.attempts = u.attempts AND s.id = ANY(@ids::bigint[])
  AND (s.status = 'sending'
       OR (s.status IN ('queued', 'unknown')
           AND (SELECT c.status FROM camp c WHERE c.id = s.campaign_id) IN ('sending', 'paused')))
RETURNING s.campaign_id, s.account_id, s.status, s.status_before
), status_counted AS (
    -- Kept status counts (campaign_status_counts): closed as cancelled, or out of unknown.
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT r.campaign_id, r.account_id, v.status, sum(v.d) FROM released r
    CROSS JOIN LATERAL (VALUES (r.status, 1), (r.status_before, -1)) v (status, d)
    WHERE r.status <> r.status_before AND v.status IN ('failed', 'unknown', 'suppressed', 'cancelled')
    GROUP BY 1, 2, 3 ORDER BY 1, 3
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
SELECT count(*) FROM released;

-- name: SendReleaseLost :one
-- Hands back the rows of claims whose answer this executor process never saw: the
-- claim statement committed (under synchronous replication, on the standby too)
-- but its connection died before the rows came back, as when the primary fails.
-- They are stamped with one of this process's executor ids, which still beats, so
-- the liveness rescue would leave them for their whole lease. The executor runs
-- this only while it holds nothing (no claim under way, every row it was handed
-- acknowledged or released: lostclaim.go), so every 'sending' row stamped with
-- one of its ids is such a row and was never given to a provider. It goes back as
-- SendReleaseMany sends a row back: queued with its attempt uncharged (closed as
-- cancelled in a cancelled campaign), in_doubt kept as it was. A row another
-- executor took meanwhile (rescued, claimed again) no longer carries our id and is
-- not touched; the campaigns are read FOR SHARE as in SendReleaseMany.
-- lease_from_in_us bounds the rows to those whose lease began no earlier than the
-- failed claim (less a margin): under asynchronous replication a failover can
-- also undo the acknowledgement of a row that was sent, which looks the same but
-- was claimed earlier, and is left to the lease rescue (lostclaim.go). It is an
-- offset from now on the database's clock, which stamped lease_until: the
-- executor knows how long ago its claim began, not when on the database's clock.
WITH lost AS (
    SELECT s.id, s.campaign_id FROM sends s
    WHERE s.status = 'sending' AND s.executor_id = ANY(@executor_ids::bigint[])
      AND s.lease_until >= coalesce(sqlc.narg('now')::timestamptz, now()) + sqlc.arg('lease_from_in_us')::bigint * interval '1 microsecond'
), camp AS (
    -- By ids, on SendPlanLinear's setting, as SendReleaseMany.
    SELECT c.id, c.status FROM campaigns c
    WHERE c.id = ANY(ARRAY(SELECT l.campaign_id FROM lost l))
    FOR SHARE
), released AS (
UPDATE sends s
SET status = CASE WHEN (SELECT c.status FROM camp c WHERE c.id = s.campaign_id) = 'cancelled'
                  THEN 'cancelled' ELSE 'queued' END,
    lease_until = NULL, attempts = greatest(s.attempts - 1, 0),
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE s.id = ANY(ARRAY(SELECT l.id FROM lost l))
  AND s.status = 'sending' AND s.executor_id = ANY(@executor_ids::bigint[])
RETURNING s.campaign_id, s.account_id, s.status
), status_counted AS (
    -- Kept status counts (campaign_status_counts): the rows closed as cancelled.
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT r.campaign_id, r.account_id, r.status, count(*) FROM released r
    WHERE r.status = 'cancelled'
    GROUP BY 1, 2, 3 ORDER BY 1, 3
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
SELECT count(*) FROM released;

-- name: SendRescueExpired :many
-- Rows in flight whose holder is gone: the lease expired (the bound for a process
-- that is alive but frozen), or, when check_liveness is set, the executor that
-- claimed them stopped its heartbeat for dead_after or deregistered (killed,
-- crashed, or stopped with acknowledgements it could not write). The caller's own
-- rows are never taken for liveness. Whether the provider drops a replay of the
-- same job id is what the claim recorded on the row (via_idempotent: the provider
-- the row was really sent through, never today's configuration; unknown counts as
-- no); if so the row is requeued, in doubt, to be replayed through that route only
-- (SendClaimBatch); otherwise the campaign's ambiguous_policy decides: retry
-- requeues, skip marks them unknown so no second copy is risked. A
-- requeue counts as an attempt (the claim charged it), so a message that keeps
-- killing its process fails at max_attempts instead of looping forever; it waits
-- expiry_delays[attempts] first (the executor's one retry policy: nothing after the
-- first expiry, one crash should not delay a campaign). A requeue happens only while
-- the campaign is sending or paused (campaigns read FOR SHARE, as in SendAckMany);
-- in a cancelled campaign the possibly delivered row becomes unknown.
-- A row stamped with no executor was claimed by a release that predates liveness
-- (a rolling upgrade's old binary): nothing says whether its process lives, so it
-- counts as a dead executor's once its claim (updated_at, which every claim sets)
-- is older than unowned_grace, instead of waiting for the whole lease.
-- The candidates are the 'sending' rows (sends_lease_idx): a few per worker.
WITH expired AS (
    SELECT s.id FROM sends s
    WHERE s.status = 'sending'
      AND (s.lease_until < coalesce(sqlc.narg('now')::timestamptz, now())
           OR (@check_liveness::bool AND s.executor_id IS DISTINCT FROM sqlc.narg('self')::bigint
               AND s.executor_id IS NOT NULL
               AND NOT EXISTS (
                   SELECT 1 FROM executors x
                   WHERE x.id = s.executor_id
                     AND x.heartbeat_at >= coalesce(sqlc.narg('now')::timestamptz, now()) - @dead_after::interval))
           OR (@check_liveness::bool AND s.executor_id IS NULL
               AND s.updated_at < coalesce(sqlc.narg('now')::timestamptz, now()) - @unowned_grace::interval))
    ORDER BY s.lease_until
    LIMIT 1000
    FOR UPDATE SKIP LOCKED
), camp AS (
    -- Each expired row is looked up by its id, and sends only so (here, in judged
    -- and in the UPDATE): the executor runs this on SendPlanLinear's plan setting,
    -- and a plan cached while sends was small joined the table whole, or a whole
    -- campaign of it (TestMaintenancePlansCachedWhileSmall).
    SELECT c.id, c.status, c.ambiguous_policy
    FROM campaigns c
    WHERE c.id = ANY(ARRAY(SELECT s.campaign_id FROM expired e CROSS JOIN LATERAL (
                                SELECT s.campaign_id FROM sends s WHERE s.id = e.id LIMIT 1) s))
    FOR SHARE OF c
), judged AS (
    SELECT e.id, s.attempts,
           ((coalesce(s.via_idempotent, false) OR c.ambiguous_policy = 'retry')
            AND c.status IN ('sending', 'paused')) AS replay
    FROM expired e
    CROSS JOIN LATERAL (SELECT s.attempts, s.via_idempotent, s.campaign_id FROM sends s WHERE s.id = e.id LIMIT 1) s
    JOIN camp c ON c.id = s.campaign_id
), rescued AS (
UPDATE sends s
SET status = CASE WHEN NOT j.replay THEN 'unknown'
                  WHEN s.attempts >= @max_attempts::int THEN 'failed'
                  ELSE 'queued' END,
    lease_until = NULL,
    in_doubt = true,
    last_error = CASE WHEN j.replay AND s.attempts >= @max_attempts::int
                      THEN 'attempts exhausted (' || s.attempts || '): lease expired while sending'
                      WHEN s.lease_until < coalesce(sqlc.narg('now')::timestamptz, now())
                      THEN 'lease expired while sending'
                      ELSE 'executor stopped while sending' END,
    next_attempt_at = coalesce(sqlc.narg('now')::timestamptz, now())
        + (@expiry_delays::interval[])[least(greatest(s.attempts, 1), cardinality(@expiry_delays::interval[]))],
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
FROM judged j
WHERE s.id = j.id AND s.id = ANY(ARRAY(SELECT e.id FROM expired e))
RETURNING s.id, s.account_id, s.campaign_id, s.subscriber_id, s.email, s.status, s.attempts, s.last_error, s.job_id
), settled_events AS (
    -- Rows settled as unknown or failed get their send.* event in this statement
    -- (a message's names it message_id, as in SendAckMany).
    INSERT INTO events (account_id, type, occurred_at, data)
    SELECT r.account_id, 'send.' || r.status, coalesce(sqlc.narg('now')::timestamptz, now()),
           jsonb_build_object('campaign_id', r.campaign_id, 'send_id', r.id,
                              'email', r.email, 'status', r.status, 'attempts', r.attempts, 'error', r.last_error)
           || CASE WHEN r.job_id LIKE 'message:%' THEN jsonb_build_object('message_id', r.subscriber_id)
                   ELSE jsonb_build_object('subscriber_id', r.subscriber_id) END
    FROM rescued r
    WHERE r.status IN ('unknown', 'failed')
), status_counted AS (
    -- The same rows in the campaign's kept status counts (campaign_status_counts).
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT r.campaign_id, r.account_id, r.status, count(*) FROM rescued r
    WHERE r.status IN ('unknown', 'failed')
    GROUP BY 1, 2, 3 ORDER BY 1, 3
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
SELECT r.id, r.campaign_id, r.status FROM rescued r;

-- name: SendDeleteFailed :execrows
-- Deletes up to 1,000 rows of a failed campaign, in the statement's own short
-- transaction: what its build had queued (CampaignFail), none of it ever claimed.
-- The build's failure calls this until nothing is left; the executors'
-- maintenance calls it too, for a removal that stopped half-way (a killed
-- process). Every account's event readers wait below the oldest running
-- transaction, so the rows do not go in one statement with the fail.
DELETE FROM sends
WHERE id IN (
    SELECT s.id FROM sends s
    WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.status = 'queued'
      AND EXISTS (SELECT 1 FROM campaigns c
                  WHERE c.account_id = @account_id AND c.id = @campaign_id AND c.status = 'failed')
    ORDER BY s.next_attempt_at, s.id -- the order of sends_claim_idx, which holds them
    LIMIT 1000
    FOR UPDATE SKIP LOCKED)
  AND status = 'queued';

-- name: SendSweepCancelled :one
-- Closes up to 1,000 queued rows of a cancelled campaign, in the statement's own
-- short transaction: the only statement that cancels a campaign's queued rows. The
-- cancel itself (CampaignCancel) changes the campaign row alone, so its transaction
-- stays short however large the campaign: every account's event readers wait below
-- the oldest running transaction, and one that cancelled 500,000 rows held them all
-- for seconds. Until a row is closed it stays queued but is never claimed
-- (SendClaimBatch claims only from sending campaigns). The cancel request calls
-- this until nothing is left; the executors' maintenance calls it too, for a
-- request that stopped half-way (a killed process) and for rows in flight at the
-- cancel that came back to queued (a temporary failure, a rescued lease).
-- The closed rows are added to the campaign's kept status counts in the statement.
WITH closed AS (
    UPDATE sends d
    SET status = 'cancelled', updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
    WHERE d.id IN (
        SELECT s.id FROM sends s
        WHERE s.account_id = @account_id AND s.campaign_id = @campaign_id AND s.status = 'queued'
          AND EXISTS (SELECT 1 FROM campaigns c
                      WHERE c.account_id = @account_id AND c.id = @campaign_id AND c.status = 'cancelled')
        ORDER BY s.next_attempt_at, s.id -- the order of sends_claim_idx, which holds them
        LIMIT 1000
        FOR UPDATE SKIP LOCKED)
      AND d.status = 'queued'
    RETURNING d.id
), status_counted AS (
    INSERT INTO campaign_status_counts AS k (campaign_id, account_id, status, n)
    SELECT @campaign_id, @account_id, 'cancelled', count(*) FROM closed HAVING count(*) > 0
    ON CONFLICT (campaign_id, status) DO UPDATE SET n = k.n + excluded.n
)
SELECT count(*) FROM closed;

-- name: SendCountQueued :one
-- The queued-rows gauge: an index-only count over the partial claim index (on
-- index paths: SendPlanIndexed; a count planned right after a large build, when the
-- statistics say most rows are queued, was a sequential scan of the table).
SELECT count(*) FROM sends WHERE status = 'queued';

-- name: ClaimPlanGeneric :exec
-- Sent with SendClaimBatch in one pipeline (one implicit transaction): the claim
-- runs on its cached generic plan instead of being planned again on every call
-- (plan_cache_mode auto keeps choosing custom plans once the statistics know a
-- large campaign). Local to the transaction, so a pooler's connection keeps its
-- settings. No sequential scan: the plan is made once per connection and kept until
-- sends is next analyzed or vacuumed (inserts do not replace it), and one made while
-- the table was empty or small (a claim of a campaign not built yet, a table that
-- retention emptied) would read the whole table on every claim after a large build
-- (TestClaimPlanCachedOnAnEmptyTable); the claim's every lookup has its index.
-- No nested loop either (as SendPlanLinear): the UPDATE's rows, looked up by the
-- picked ids, were matched to the judged rows in a nested loop that read them all
-- for each row, quadratic in the batch (2,500 comparisons a claim of 50, 22,500 of
-- 150); the claim's other lookups are LATERAL, which stay nested loops. JIT off,
-- as those then cost 1e10 more by the planner's reckoning.
SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true),
       set_config('enable_nestloop', 'off', true), set_config('jit', 'off', true);

-- name: SendPlanIndexed :exec
-- Sent in one pipeline (one implicit transaction) with each statement of the send
-- path that runs on a plan PostgreSQL caches per connection (MessageStreamsDue,
-- and maintenance's CampaignFinish,
-- CampaignList*WithQueued, SendCountQueued), for the reason ClaimPlanGeneric turns
-- sequential scans off: after five custom plans PostgreSQL keeps a generic one, and
-- one made while sends was small (a first test campaign, a few messages) is a scan
-- of the whole table, which every execution after a large build would repeat until
-- sends is next analyzed (TestAckPlanCachedWhileSmall,
-- TestMessagePlansCachedWhileSmall, TestMaintenancePlansCachedWhileSmall). Local
-- to the transaction. JIT off, as a scan left with no other path (a small table
-- without a usable index) costs 1e10 more and would be compiled on every run.
SELECT set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true);

-- name: SendPlanLinear :exec
-- Sent with SendAckMany in one pipeline: SendPlanIndexed's setting, and no nested
-- loop. The acknowledged rows are looked up by their ids (an index condition), and
-- statistics that say almost no row is in flight (a table of settled campaigns)
-- make the planner expect one: it then joined them to the results in a nested loop
-- that reads every result for each row, quadratic in the acknowledgement's size
-- (TestAckPlanLinearInItsRows). Every other join in the acknowledgement is a
-- LATERAL lookup, which stays a nested loop. The rescue (SendRescueExpired), a
-- message stream's claim (MessageClaimBatch) and the releases (SendReleaseMany,
-- SendReleaseLost) run on it too, for the same shape.
-- Local to the transaction.
-- JIT off as well: a LATERAL lookup's nested loop then costs 1e10 more by the
-- planner's reckoning, past jit_above_cost, and each acknowledgement compiled its
-- plan with inlining and optimization (seconds, every time).
SELECT set_config('enable_seqscan', 'off', true), set_config('enable_nestloop', 'off', true),
       set_config('jit', 'off', true);
