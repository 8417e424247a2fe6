-- Sequences (migration 00290): definitions, their step campaigns, enrollments and
-- the advancer's statements. Tenant queries filter on account_id; the advancer's
-- claim and the trigger sweep read every account and say so.

-- name: SequenceCreate :one
INSERT INTO sequences (account_id, name, trigger_type, list_id, event_name, time_zone, late_after, steps, segment_id,
                       date_attribute, date_offset_days, date_at, reentry, reentry_after, send_window)
VALUES (@account_id, @name, @trigger_type, sqlc.narg('list_id'), sqlc.narg('event_name'), sqlc.arg(time_zone),
        sqlc.narg('late_after')::interval, @steps, sqlc.narg('segment_id'), sqlc.narg('date_attribute'), @date_offset_days, @date_at,
        @reentry, sqlc.narg('reentry_after')::interval, sqlc.narg('send_window')::jsonb)
RETURNING *;

-- name: SequenceGet :one
SELECT * FROM sequences WHERE account_id = @account_id AND id = @id;

-- name: SequenceList :many
SELECT * FROM sequences WHERE account_id = @account_id AND id > @after_id ORDER BY id LIMIT @lim;

-- name: SequenceUpdate :one
-- Any state but archived may be edited. Enrollments keep their position: an edit
-- affects the steps they have not reached yet.
UPDATE sequences
SET name = @name, trigger_type = @trigger_type, list_id = sqlc.narg('list_id'), event_name = sqlc.narg('event_name'),
    -- An edit may change the segment: its sweep starts over (a second look enrolls nobody twice).
    segment_id = sqlc.narg('segment_id'), segment_sweep_after_id = 0, segment_sweep_due_at = NULL,
    time_zone = sqlc.arg(time_zone), late_after = sqlc.narg('late_after')::interval, steps = @steps,
    date_attribute = sqlc.narg('date_attribute'), date_offset_days = @date_offset_days, date_at = @date_at,
    reentry = @reentry, reentry_after = sqlc.narg('reentry_after')::interval,
    send_window = sqlc.narg('send_window')::jsonb,
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE account_id = @account_id AND id = @id AND status <> 'archived'
RETURNING *;

-- name: SequenceDelete :execrows
-- Only a draft is deleted; a sequence that ran is archived, keeping its history.
DELETE FROM sequences WHERE account_id = @account_id AND id = @id AND status = 'draft';

-- name: SequenceTransition :one
-- The compare-and-set of every state change: no row back means the sequence is
-- not in a state the change starts from (409) or not the account's (404).
UPDATE sequences
SET status = sqlc.arg('to')::text,
    activated_at = CASE WHEN sqlc.arg('to')::text = 'active'
                        THEN coalesce(activated_at, coalesce(sqlc.narg('now')::timestamptz, now())) ELSE activated_at END,
    swept_at = CASE WHEN sqlc.arg('to')::text = 'active'
                    THEN coalesce(swept_at, coalesce(sqlc.narg('now')::timestamptz, now())) ELSE swept_at END,
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE account_id = @account_id AND id = @id AND status = ANY(sqlc.arg('from')::text[])
RETURNING *;

-- name: SequenceOwned :one
-- Which of the ids a definition names belong to the account.
SELECT coalesce((SELECT array_agg(t.id) FROM templates t WHERE t.account_id = sqlc.arg(account_id)::bigint AND t.id = ANY(sqlc.arg(template_ids)::bigint[])), '{}')::bigint[] AS templates,
       coalesce((SELECT array_agg(x.id) FROM senders x WHERE x.account_id = sqlc.arg(account_id)::bigint AND x.id = ANY(sqlc.arg(sender_ids)::bigint[])), '{}')::bigint[] AS senders,
       coalesce((SELECT array_agg(g.id) FROM segments g WHERE g.account_id = sqlc.arg(account_id)::bigint AND g.id = ANY(sqlc.arg(segment_ids)::bigint[])), '{}')::bigint[] AS segments,
       coalesce((SELECT array_agg(l.id) FROM lists l WHERE l.account_id = sqlc.arg(account_id)::bigint AND l.id = ANY(sqlc.arg(list_ids)::bigint[])), '{}')::bigint[] AS lists;

-- name: SequenceStepCampaigns :many
-- Every step campaign of the sequence, of every run that has one.
SELECT position, run, campaign_id FROM sequence_steps WHERE account_id = @account_id AND sequence_id = @sequence_id
ORDER BY run, position;

-- name: SequenceRuns :many
-- The runs that have step campaigns (1 at least once activated): an edit brings each up to date.
SELECT DISTINCT run FROM sequence_steps WHERE account_id = @account_id AND sequence_id = @sequence_id ORDER BY run;

-- name: SequenceRunLock :exec
-- Serialises the making of one run's step campaigns (two advancers reaching a new
-- run's step at once): held to the end of the transaction.
SELECT pg_advisory_xact_lock(hashtext('sequence run campaigns'), sqlc.arg(sequence_key)::int);

-- name: SequenceStepCampaignUpsert :one
-- The campaign that carries send step `position` of run `run`, made or brought up to date from
-- the step's template. It is 'sending' while the sequence is active, 'paused'
-- while paused; its list_ids are the sequence's list, so an opt-out from that
-- list flags its queued rows (SendSuppressLeftLists) and the claim skips them. A
-- step naming no sender is pinned to the account's default sender of this moment;
-- a step naming a sender pool sends through the pool (no sender: one or the other).
WITH tpl AS (
    SELECT t.subject, t.html, t.text, t.language FROM templates t
    WHERE t.account_id = @account_id AND t.id = @template_id
), existing AS (
    SELECT st.campaign_id FROM sequence_steps st
    WHERE st.account_id = @account_id AND st.sequence_id = @sequence_id AND st.position = @position AND st.run = @run
), updated AS (
    UPDATE campaigns c
    SET subject = tpl.subject, html_template = tpl.html, text_template = tpl.text, language = tpl.language,
        from_email = @from_email, from_name = @from_name, reply_to = @reply_to,
        list_ids = @list_ids::bigint[], template_id = @template_id,
        sender_id = CASE WHEN sqlc.narg('pool_id')::bigint IS NOT NULL THEN NULL
                         ELSE coalesce(sqlc.narg('sender_id')::bigint,
                                       (SELECT s.id FROM senders s WHERE s.account_id = @account_id AND s.is_default)) END,
        pool_id = sqlc.narg('pool_id')::bigint,
        status = CASE WHEN c.status = 'cancelled' THEN c.status ELSE @status::text END,
        updated_at = now()
    FROM tpl, existing e
    WHERE c.account_id = @account_id AND c.id = e.campaign_id AND c.kind = 'sequence'
    RETURNING c.id
), inserted AS (
    INSERT INTO campaigns (account_id, name, subject, from_email, from_name, reply_to, html_template, text_template,
                           language, list_ids, status, kind, approved_at, started_at, sender_id, pool_id, template_id)
    SELECT @account_id, left('sequence ' || @sequence_id::bigint || ' step ' || @position::int
                             || CASE WHEN @run::int > 1 THEN ' run ' || @run::int ELSE '' END, 200), tpl.subject,
           @from_email, @from_name, @reply_to, tpl.html, tpl.text, tpl.language, @list_ids::bigint[], @status::text,
           'sequence', now(), now(),
           CASE WHEN sqlc.narg('pool_id')::bigint IS NOT NULL THEN NULL
                ELSE coalesce(sqlc.narg('sender_id')::bigint,
                              (SELECT s.id FROM senders s WHERE s.account_id = @account_id AND s.is_default)) END,
           sqlc.narg('pool_id')::bigint, @template_id
    FROM tpl
    WHERE NOT EXISTS (SELECT 1 FROM existing)
    RETURNING id
), linked AS (
    INSERT INTO sequence_steps (sequence_id, position, run, account_id, campaign_id)
    SELECT @sequence_id, @position, @run, @account_id, i.id FROM inserted i
)
SELECT id FROM updated UNION ALL SELECT id FROM inserted;

-- name: SequenceCampaignsSetStatus :execrows
-- Pause, resume or archive every step campaign of a sequence, in the transition's
-- transaction: a paused step campaign is not claimed (SendClaimBatch's campaign
-- guard), a cancelled one has its queued rows closed by the cancel sweep.
UPDATE campaigns c
SET status = @status::text,
    cancelled_at = CASE WHEN @status::text = 'cancelled' THEN now() ELSE c.cancelled_at END,
    updated_at = now()
FROM sequence_steps st
WHERE st.account_id = @account_id AND st.sequence_id = @sequence_id
  AND c.account_id = @account_id AND c.id = st.campaign_id AND c.kind = 'sequence' AND c.status <> 'cancelled';

-- name: SequenceExitArchived :execrows
-- Ends up to 1,000 running enrollments of an archived sequence, with the reason
-- archived and a timeline line each, in the statement's own short transaction:
-- every account's event readers wait below the oldest running transaction, so the
-- archive's own transaction changes the sequence and its step campaigns only, and
-- its enrollments end in these batches after it commits. Until one ends it is
-- never advanced (SequenceClaimDue takes only an active sequence's enrollments,
-- and the advancer reads the sequence's status again under SequenceAdvanceLock). The
-- archive calls this until nothing is left; the executors' maintenance calls it
-- too (SequenceListArchivedWithActive), for an archive cut short and for an
-- enrollment that joined as the archive committed. Locked rows are waited for.
WITH batch AS (
    SELECT e.id FROM sequence_enrollments e
    WHERE e.account_id = @account_id AND e.sequence_id = @sequence_id AND e.state = 'active'
      AND EXISTS (SELECT 1 FROM sequences q
                  WHERE q.account_id = @account_id AND q.id = @sequence_id AND q.status = 'archived')
    LIMIT 1000
    FOR UPDATE OF e
), ended AS (
    UPDATE sequence_enrollments e
    SET state = 'exited', exit_reason = 'archived', waiting_for = NULL,
        finished_at = coalesce(sqlc.narg('now')::timestamptz, now()), updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
    FROM batch b
    WHERE e.id = b.id AND e.state = 'active'
    RETURNING e.id, e.step, e.run
)
INSERT INTO sequence_step_log (account_id, sequence_id, enrollment_id, step, outcome, reason, at, run)
SELECT @account_id, @sequence_id, x.id, x.step, 'exited', 'archived', coalesce(sqlc.narg('now')::timestamptz, now()), x.run
FROM ended x;

-- name: SequenceSubscriberByEmail :one
SELECT id, email FROM subscribers WHERE account_id = @account_id AND email_lower = lower(@email::text);

-- name: SequenceSubscriberByID :one
SELECT id, email FROM subscribers WHERE account_id = @account_id AND id = @id;

-- name: SequenceEnroll :one
-- Once per (sequence, subscriber): a second trigger finds the enrollment and adds
-- nothing (no row back) — unless the sequence allows re-entry after exit and the
-- enrollment has ended (not by an opt-out: left_list, suppressed, not_confirmed,
-- subscriber_deleted; nor archived) at least reentry_after ago: then it starts its
-- next run from step 0 with the new trigger's data. A trigger while it runs
-- changes nothing. The 'entered' line of the timeline is written with it.
WITH enrolled AS (
    INSERT INTO sequence_enrollments AS e (account_id, sequence_id, subscriber_id, email, due_at, data, trigger)
    VALUES (@account_id, @sequence_id, @subscriber_id, @email, coalesce(sqlc.narg('now')::timestamptz, now()),
            @data, @trigger)
    ON CONFLICT (sequence_id, subscriber_id) DO UPDATE
    SET run = e.run + 1, step = 0, state = 'active', due_at = excluded.due_at, waiting_for = NULL,
        event_seen = false, data = excluded.data, trigger = excluded.trigger, exit_reason = NULL,
        finished_at = NULL, email = excluded.email, updated_at = excluded.due_at
    WHERE e.state IN ('completed', 'exited')
      AND coalesce(e.exit_reason, '') NOT IN ('left_list', 'suppressed', 'not_confirmed', 'subscriber_deleted', 'archived')
      AND EXISTS (SELECT 1 FROM sequences q
                  WHERE q.id = e.sequence_id AND q.reentry = 'after_exit'
                    AND (q.reentry_after IS NULL OR e.finished_at <= excluded.due_at - q.reentry_after))
    RETURNING e.id, e.run
), logged AS (
    INSERT INTO sequence_step_log (account_id, sequence_id, enrollment_id, step, outcome, reason, at, run)
    SELECT @account_id, @sequence_id, e.id, 0, 'entered', @trigger, coalesce(sqlc.narg('now')::timestamptz, now()), e.run
    FROM enrolled e
)
SELECT id, run FROM enrolled;

-- name: SequenceEventSequences :many
-- The active sequences a custom event triggers.
SELECT id FROM sequences
WHERE account_id = @account_id AND status = 'active' AND trigger_type = 'event' AND event_name = @event_name
ORDER BY id;

-- name: TrackEventInsert :one
-- Idempotent by the event's own id: a replay inserts nothing (no row back).
INSERT INTO track_events (account_id, event_id, name, email_lower, subscriber_id, data, created_at)
VALUES (@account_id, @event_id, @name, lower(@email::text), sqlc.narg('subscriber_id'), @data,
        coalesce(sqlc.narg('now')::timestamptz, now()))
ON CONFLICT (account_id, event_id) DO NOTHING
RETURNING created_at;

-- name: TrackEventGet :one
SELECT * FROM track_events WHERE account_id = @account_id AND event_id = @event_id;

-- name: TrackEventCounts :exec
UPDATE track_events SET enrolled = @enrolled, woke = @woke WHERE account_id = @account_id AND event_id = @event_id;

-- name: SequenceWake :execrows
-- An awaited event arrived: the subscriber's enrollments waiting for it are due
-- now, with the event's data merged into theirs. The advancer takes the
-- on_event branch.
UPDATE sequence_enrollments
SET event_seen = true, due_at = coalesce(sqlc.narg('now')::timestamptz, now()), data = data || @data::jsonb,
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE account_id = @account_id AND subscriber_id = @subscriber_id AND state = 'active' AND waiting_for = @event_name;

-- name: SequenceListSweep :many
-- The trigger sweep: every active list-triggered sequence, with the window of
-- memberships to look at (since the watermark less an overlap, so a membership
-- whose transaction committed after the last sweep's snapshot is not missed; a
-- second look at one enrolls nothing). Not a tenant query: the executors run it.
SELECT id, account_id, trigger_type, list_id, activated_at, swept_at
FROM sequences
WHERE status = 'active' AND trigger_type IN ('list_joined', 'confirmed') AND list_id IS NOT NULL
ORDER BY id;

-- name: SequenceSweepList :execrows
-- Enrolls the members of the sequence's list whose membership became subscribed
-- in the window (and, for 'confirmed', whose address is confirmed), never before
-- the sequence was activated. Runs with the watermark update in one transaction.
WITH enrolled AS (
    INSERT INTO sequence_enrollments (account_id, sequence_id, subscriber_id, email, due_at, data, trigger)
    SELECT @account_id, @sequence_id, s.id, s.email, coalesce(sqlc.narg('now')::timestamptz, now()), '{}', @trigger::text
    FROM list_members m
    JOIN subscribers s ON s.id = m.subscriber_id AND s.account_id = @account_id
    WHERE m.list_id = @list_id AND m.status = 'subscribed'
      AND m.status_at >= @since::timestamptz
      AND (@trigger::text <> 'confirmed' OR s.status = 'confirmed')
    ON CONFLICT (sequence_id, subscriber_id) DO NOTHING
    RETURNING id
)
INSERT INTO sequence_step_log (account_id, sequence_id, enrollment_id, step, outcome, reason, at)
SELECT @account_id, @sequence_id, e.id, 0, 'entered', @trigger::text, coalesce(sqlc.narg('now')::timestamptz, now())
FROM enrolled e;

-- name: SequenceSwept :exec
UPDATE sequences SET swept_at = @swept_at WHERE id = @id AND swept_at < @swept_at;

-- name: SequenceClaimDue :many
-- The advancer's claim, for every account in one statement: a loose index scan
-- over the accounts with active enrollments (sequence_enrollments_due_idx), then
-- the oldest due enrollments of each, at most per_account of one account and n
-- in all, locked SKIP LOCKED so replicas take disjoint work. The caller holds the
-- transaction while it evaluates them (a few short statements each) and commits
-- the step, its send row and its events together. Enrollments of a sequence that
-- is not active wait where they are (a paused sequence resumes them). Not a
-- tenant query.
WITH RECURSIVE accts AS (
    (SELECT e.account_id FROM sequence_enrollments e WHERE e.state = 'active' ORDER BY e.account_id LIMIT 1)
    UNION ALL
    SELECT (SELECT e.account_id FROM sequence_enrollments e
            WHERE e.state = 'active' AND e.account_id > a.account_id ORDER BY e.account_id LIMIT 1)
    FROM accts a WHERE a.account_id IS NOT NULL
)
SELECT d.id, d.account_id, d.sequence_id, d.subscriber_id, d.email, d.step, d.due_at, d.waiting_for,
       d.event_seen, d.data, d.run
FROM accts a
CROSS JOIN LATERAL (
    SELECT e.* FROM sequence_enrollments e
    WHERE e.account_id = a.account_id AND e.state = 'active'
      AND e.due_at <= coalesce(sqlc.narg('now')::timestamptz, now())
      AND EXISTS (SELECT 1 FROM sequences q WHERE q.id = e.sequence_id AND q.status = 'active')
      -- Once per account (it names only a.account_id): a suspended or deleted
      -- account's enrollments wait where they are.
      AND EXISTS (SELECT 1 FROM accounts ac WHERE ac.id = a.account_id
                  AND ac.suspended_at IS NULL AND ac.deleted_at IS NULL)
    ORDER BY e.due_at, e.id
    LIMIT @per_account
    FOR UPDATE OF e SKIP LOCKED
) d
WHERE a.account_id IS NOT NULL
LIMIT @n;

-- name: SequenceAdvanceLock :exec
-- Taken by an advancer's batch, shared, before it reads a sequence
-- (SequenceForAdvance), and held to its commit; a transition (pause, resume,
-- archive) takes it exclusive first (SequenceTransitionLock). So a transition
-- waits for the batches already advancing the sequence's enrollments, and a batch
-- whose claim read the sequence active just before a transition committed waits
-- for that commit and then reads the new status, and leaves those enrollments
-- where they are. An advisory lock rather than a lock on the sequence's row: the
-- sweeps that update the row (SKIP LOCKED) are not held back by the batches.
SELECT pg_advisory_xact_lock_shared(hashtext('sequence advance'), sqlc.arg(sequence_key)::int);

-- name: SequenceTransitionLock :exec
-- See SequenceAdvanceLock.
SELECT pg_advisory_xact_lock(hashtext('sequence advance'), sqlc.arg(sequence_key)::int);

-- name: SequenceForAdvance :one
-- Read after SequenceAdvanceLock, in a statement of its own: its snapshot sees
-- a transition that committed while the batch waited for the lock.
SELECT id, account_id, status, list_id, time_zone, late_after, steps FROM sequences WHERE id = @id;

-- name: SequenceSubscriberLock :one
-- The subscriber, locked FOR SHARE until the step commits: an opt-out that
-- changes the row after this waits for the step (and then flags its send row),
-- and a step never queues a send after an opt-out committed. NOWAIT: the
-- advancer never waits on an opt-out in progress (holding a batch's locks while
-- waiting would close a cycle with a multi-row opt-out: deadlock); the
-- enrollment is evaluated again at the next tick instead.
SELECT s.id, s.email, s.email_lower, s.status, s.attributes,
       EXISTS (SELECT 1 FROM suppressions x WHERE x.account_id = s.account_id AND x.email_lower = s.email_lower)::bool AS suppressed
FROM subscribers s
WHERE s.account_id = @account_id AND s.id = @id
FOR SHARE OF s NOWAIT;

-- name: SequenceSubscriberAttributes :one
-- The subscriber's attributes (its time zone), read without a lock.
SELECT attributes FROM subscribers WHERE account_id = @account_id AND id = @id;

-- name: SequenceMembershipLock :one
-- The subscriber's membership of the sequence's list, locked as the subscriber is
-- (NOWAIT likewise).
SELECT status FROM list_members
WHERE account_id = @account_id AND list_id = @list_id AND subscriber_id = @subscriber_id
FOR SHARE NOWAIT;

-- name: SequenceSendInsert :one
-- A step's send: one row, job_id 'sequence:<sequence>:<step>:<subscriber>' in run
-- 1, 'sequence:<sequence>:<step>:<subscriber>:<run>' in a later run
-- (sends_job_id_key), in the step's campaign of that run. Queued due at once
-- ('-infinity', as a build's rows), so the claim takes it in id order. A second
-- insert of the same step (a re-run after a crash) adds nothing: no row back.
INSERT INTO sends (campaign_id, account_id, subscriber_id, email, email_lower, job_id)
VALUES (@campaign_id, @account_id, @subscriber_id, @email::text, lower(@email::text), @job_id)
ON CONFLICT DO NOTHING
RETURNING id;

-- name: SequenceInSegment :one
-- Whether the subscriber is in the segment now (the segment's filter, as the
-- campaign build applies it, for one subscriber).
SELECT subscriber_in_segment(@account_id::bigint, @segment_id::bigint, @subscriber_id::bigint)::bool;

-- name: SequenceLeftList :one
-- Whether the subscriber is not (or no longer) a subscribed member of the list.
SELECT NOT EXISTS (SELECT 1 FROM list_members
                   WHERE account_id = @account_id AND list_id = @list_id AND subscriber_id = @subscriber_id
                     AND status = 'subscribed')::bool;

-- name: SequenceDataMatch :one
-- A condition on the enrollment's data (the trigger's and awaited events'): a
-- jsonpath predicate, bound as a parameter, never SQL. An error inside it is
-- silent under @@: no match.
SELECT coalesce(jsonb_path_match(sqlc.arg(data)::jsonb, sqlc.arg(match)::text::jsonpath, '{}', true), false)::bool AS matched;

-- name: SequenceJsonpathCheck :one
-- PostgreSQL parses a condition's predicate as it is saved (a 22/42 error is a 422).
SELECT (sqlc.arg(match)::text::jsonpath)::text AS canonical;

-- name: SequenceEnrollmentSave :exec
-- The enrollment after its evaluation, in the claim's transaction.
UPDATE sequence_enrollments
SET step = @step, state = @state, due_at = @due_at, waiting_for = sqlc.narg('waiting_for'),
    event_seen = @event_seen, exit_reason = sqlc.narg('exit_reason'),
    finished_at = CASE WHEN @state::text = 'active' THEN NULL ELSE coalesce(sqlc.narg('now')::timestamptz, now()) END,
    updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE id = @id;

-- name: SequenceLog :exec
INSERT INTO sequence_step_log (account_id, sequence_id, enrollment_id, step, outcome, reason, job_id, at, run)
VALUES (@account_id, @sequence_id, @enrollment_id, @step, @outcome, sqlc.narg('reason'), sqlc.narg('job_id'),
        coalesce(sqlc.narg('now')::timestamptz, now()), @run);

-- name: SequenceEnrollmentList :many
-- The per-subscriber timeline's enrollments (email: one address; NULL: all, by id).
SELECT * FROM sequence_enrollments
WHERE account_id = @account_id AND sequence_id = @sequence_id AND id > @after_id
  AND (sqlc.narg('email')::text IS NULL OR lower(email) = lower(sqlc.narg('email')::text))
ORDER BY id
LIMIT @lim;

-- name: SequenceTimeline :many
-- What happened to these enrollments, step by step, with each send's status now.
SELECT l.enrollment_id, l.step, l.outcome, l.reason, l.job_id, l.at, s.status AS send_status, s.sent_at, l.run
FROM sequence_step_log l
LEFT JOIN sends s ON l.job_id IS NOT NULL AND s.job_id = l.job_id AND s.job_id NOT LIKE 'campaign:%'
WHERE l.account_id = @account_id AND l.enrollment_id = ANY(@enrollment_ids::bigint[])
ORDER BY l.enrollment_id, l.id;

-- name: SequenceStepStats :many
-- Per step: how many enrollments reached it, were handed to the send path, skipped,
-- exited (by reason), and what became of the sends. A reason is counted by its
-- leading word: "until 2026-12-06T09:00:00Z", "late: due …" and "event
-- signed_up" carry one enrollment's time or event (the timeline shows them), and
-- grouped whole they would make a key per enrollment; the words are a fixed set.
SELECT l.step, l.outcome, coalesce(substring(l.reason FROM '^[a-z_]+'), '')::text AS reason, count(*)::bigint AS n
FROM sequence_step_log l
WHERE l.account_id = @account_id AND l.sequence_id = @sequence_id
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3;

-- name: SequenceSendStats :many
SELECT st.position AS step, s.status, count(*)::bigint AS n
FROM sequence_steps st
JOIN sends s ON s.campaign_id = st.campaign_id
WHERE st.account_id = @account_id AND st.sequence_id = @sequence_id
GROUP BY st.position, s.status
ORDER BY st.position, s.status;

-- name: SequenceStateCounts :many
SELECT state, count(*)::bigint AS n FROM sequence_enrollments
WHERE account_id = @account_id AND sequence_id = @sequence_id
GROUP BY state ORDER BY state;

-- name: SequenceEnrollmentKeep :exec
-- An enrollment whose evaluation was rolled back stays where it was, due again at due_at.
UPDATE sequence_enrollments
SET due_at = @due_at, updated_at = coalesce(sqlc.narg('now')::timestamptz, now())
WHERE id = @id;

-- name: SequenceDateSweepList :many
-- The date-triggered sequences due for a sweep (at most one a minute each). Not a
-- tenant query: the executors run it.
SELECT id, account_id, list_id, time_zone, date_attribute, date_offset_days, date_at, activated_at
FROM sequences
WHERE status = 'active' AND trigger_type = 'date_attribute' AND date_attribute IS NOT NULL
  AND (swept_at IS NULL OR swept_at <= activated_at
       OR swept_at < coalesce(sqlc.narg('now')::timestamptz, now()) - interval '1 minute')
ORDER BY id;

-- name: SequenceSweepDate :execrows
-- Enrolls the subscribers (confirmed; members of list_id when set) whose date
-- attribute plus the offset, at the time of day in the subscriber's zone, falls
-- from the activation to a day ahead, due at that moment. The date is read with
-- a jsonpath .datetime("YYYY-MM-DD") in silent mode: a missing or malformed value
-- enrolls nobody rather than failing the sweep, and so does a date outside years 1–9999. The subscriber's zone is
-- attributes.timezone when it is a string naming a zone PostgreSQL knows (the
-- zone list is read once per statement and hash-joined; an unknown name would
-- make AT TIME ZONE fail the whole sweep), else the sequence's. It reads every
-- subscriber of the account, hence at most once a minute.
WITH zones AS (
    SELECT t.name FROM pg_timezone_names() AS t(name, abbrev, utc_offset, is_dst)
), cand AS (
    SELECT s.id, s.email,
           -- A date the jsonpath accepts but a timestamp cannot hold (year 300000)
           -- would fail the whole statement: CASE keeps it from being computed, so
           -- such a subscriber is skipped like a malformed one (a WHERE could be
           -- evaluated after the outer filter on due).
           CASE WHEN d.day BETWEEN date '0001-01-01' AND date '9999-12-31'
                THEN ((d.day + sqlc.arg(offset_days)::int) + sqlc.arg(at)::text::time)
                     AT TIME ZONE coalesce(z.name, sqlc.arg(tz)::text) END AS due
    FROM subscribers s
    CROSS JOIN LATERAL (
        SELECT (jsonb_path_query_first(s.attributes, sqlc.arg(path)::text::jsonpath, '{}', true) #>> '{}')::date AS day
    ) d
    LEFT JOIN zones z ON jsonb_typeof(s.attributes -> 'timezone') = 'string' AND z.name = s.attributes ->> 'timezone'
    WHERE s.account_id = @account_id AND s.status = 'confirmed'
      AND (sqlc.narg('list_id')::bigint IS NULL OR EXISTS (
          SELECT 1 FROM list_members m WHERE m.account_id = @account_id AND m.list_id = sqlc.narg('list_id')::bigint
            AND m.subscriber_id = s.id AND m.status = 'subscribed'))
), enrolled AS (
    INSERT INTO sequence_enrollments (account_id, sequence_id, subscriber_id, email, due_at, data, trigger)
    SELECT @account_id, @sequence_id, c.id, c.email, c.due, '{}', 'date_attribute'
    FROM cand c
    WHERE c.due >= @since::timestamptz AND c.due < @until::timestamptz
    ON CONFLICT (sequence_id, subscriber_id) DO NOTHING
    RETURNING id
)
INSERT INTO sequence_step_log (account_id, sequence_id, enrollment_id, step, outcome, reason, at)
SELECT @account_id, @sequence_id, e.id, 0, 'entered', 'date_attribute', coalesce(sqlc.narg('now')::timestamptz, now())
FROM enrolled e;

-- name: SequenceSegmentSweepClaim :many
-- The segment trigger's sweep claim, for every account in one statement: the
-- active segment_entered sequences whose sweep is due, at most per_account of one
-- account and n in all, locked SKIP LOCKED and pushed to next_due before the pass
-- runs, so no other executor takes them meanwhile (and a crashed pass is taken
-- again at next_due, from the same cursor). Not a tenant query.
WITH due AS (
    SELECT d.id FROM (
        SELECT q.id, row_number() OVER (PARTITION BY q.account_id ORDER BY q.segment_sweep_due_at NULLS FIRST, q.id) AS rn
        FROM sequences q
        WHERE q.status = 'active' AND q.trigger_type = 'segment_entered' AND q.segment_id IS NOT NULL
          AND (q.segment_sweep_due_at IS NULL OR q.segment_sweep_due_at <= @now::timestamptz)
    ) d
    WHERE d.rn <= @per_account::int
), locked AS (
    SELECT q.id FROM sequences q
    WHERE q.id IN (SELECT due.id FROM due) AND q.status = 'active'
      AND (q.segment_sweep_due_at IS NULL OR q.segment_sweep_due_at <= @now::timestamptz)
    ORDER BY q.id
    LIMIT @n::int
    FOR UPDATE SKIP LOCKED
)
UPDATE sequences s SET segment_sweep_due_at = @next_due::timestamptz
FROM locked
WHERE s.id = locked.id
RETURNING s.id, s.account_id, s.segment_id::bigint AS segment_id, s.list_id, s.segment_sweep_after_id;

-- name: SequenceStatementTimeout :exec
-- Bounds the statements of the transaction it runs in (a sweep pass).
SELECT set_config('statement_timeout', @timeout::text, true);

-- name: SequenceSweepSegment :one
-- One pass of a segment trigger's sweep: the account's next chunk of subscribers
-- after after_id (by id), of which the confirmed ones that match the segment
-- (subscriber_in_segment) and, when the sequence has a list, are
-- subscribed members of it, are enrolled. last_id is where the next pass goes on
-- (0: the scan reached the end).
WITH scan AS (
    SELECT s.id, s.email, s.status, s.attributes, s.created_at FROM subscribers s
    WHERE s.account_id = @account_id AND s.id > @after_id
    ORDER BY s.id
    LIMIT @chunk
), cand AS (
    SELECT sc.id, sc.email FROM scan sc
    WHERE sc.status = 'confirmed'
      AND subscriber_in_segment(@account_id::bigint, @segment_id::bigint, sc.id)
      AND (sqlc.narg('list_id')::bigint IS NULL OR EXISTS (
          SELECT 1 FROM list_members m WHERE m.account_id = @account_id AND m.list_id = sqlc.narg('list_id')::bigint
            AND m.subscriber_id = sc.id AND m.status = 'subscribed'))
), enrolled AS (
    INSERT INTO sequence_enrollments (account_id, sequence_id, subscriber_id, email, due_at, data, trigger)
    SELECT @account_id, @sequence_id, c.id, c.email, @now::timestamptz, '{}', 'segment_entered'
    FROM cand c
    ON CONFLICT (sequence_id, subscriber_id) DO NOTHING
    RETURNING id
), logged AS (
    INSERT INTO sequence_step_log (account_id, sequence_id, enrollment_id, step, outcome, reason, at)
    SELECT @account_id, @sequence_id, e.id, 0, 'entered', 'segment_entered', @now::timestamptz
    FROM enrolled e
)
SELECT coalesce((SELECT max(sc.id) FROM scan sc), 0)::bigint AS last_id,
       (SELECT count(*) FROM enrolled)::bigint AS enrolled;

-- name: SequenceSegmentSwept :exec
-- Where the segment sweep goes on, and when.
UPDATE sequences SET segment_sweep_after_id = @after_id, segment_sweep_due_at = @due_at::timestamptz
WHERE id = @id;

-- name: SequenceSegmentEnrollSubscriber :execrows
-- The write path's side of the segment trigger: after a subscriber's attributes or
-- status changed (in the same transaction), enroll them in every active
-- segment_entered sequence of the account whose segment they now match.
WITH cand AS (
    SELECT q.id AS sequence_id, s.id, s.email FROM sequences q
    JOIN subscribers s ON s.account_id = q.account_id AND s.id = @subscriber_id
    WHERE q.account_id = @account_id AND q.status = 'active' AND q.trigger_type = 'segment_entered'
      AND s.status = 'confirmed'
      AND subscriber_in_segment(@account_id::bigint, q.segment_id, s.id)
      AND (q.list_id IS NULL OR EXISTS (
          SELECT 1 FROM list_members m WHERE m.account_id = @account_id AND m.list_id = q.list_id
            AND m.subscriber_id = s.id AND m.status = 'subscribed'))
), enrolled AS (
    INSERT INTO sequence_enrollments (account_id, sequence_id, subscriber_id, email, due_at, data, trigger)
    SELECT @account_id, c.sequence_id, c.id, c.email, coalesce(sqlc.narg('now')::timestamptz, now()), '{}', 'segment_entered'
    FROM cand c
    ON CONFLICT (sequence_id, subscriber_id) DO NOTHING
    RETURNING id, sequence_id
)
INSERT INTO sequence_step_log (account_id, sequence_id, enrollment_id, step, outcome, reason, at)
SELECT @account_id, e.sequence_id, e.id, 0, 'entered', 'segment_entered', coalesce(sqlc.narg('now')::timestamptz, now())
FROM enrolled e;

-- name: SequenceClicked :one
-- Whether the send with this job id (a step's, in the enrollment's run) had a
-- human click: not suspected_bot, and not the hidden honeypot link (index 0).
SELECT EXISTS (
    SELECT 1 FROM sends s
    JOIN tracking_hits h ON h.send_id = s.id AND h.kind = 'click'
    WHERE s.job_id = @job_id AND s.job_id NOT LIKE 'campaign:%' AND s.account_id = @account_id
      AND h.account_id = @account_id AND h.campaign_id = s.campaign_id
      AND NOT h.suspected_bot AND h.link_idx > 0)::bool;

-- name: SequenceStepCampaignClicks :one
-- A step campaign's click tracking: whether it is on, and its stored links.
SELECT c.track_clicks,
       coalesce((SELECT array_agg(l.url ORDER BY l.idx) FROM tracked_links l
                 WHERE l.account_id = @account_id AND l.campaign_id = c.id), '{}')::text[] AS urls,
       c.html_template
FROM campaigns c WHERE c.account_id = @account_id AND c.id = @campaign_id AND c.kind = 'sequence';

-- name: SequenceStepCampaignUntrack :exec
-- An edit changed a step's links after some were stored: the links already sent
-- keep redirecting to what they were sent with, and the step's sends from now on
-- carry their links untracked.
UPDATE campaigns SET track_clicks = false WHERE account_id = @account_id AND id = @campaign_id AND kind = 'sequence';

-- name: SequenceSendDataInsert :exec
-- The enrollment's data as the step's send is queued (with it, in its
-- transaction): what the step's templates see as .Event.
INSERT INTO sequence_send_data (account_id, job_id, data, created_at)
VALUES (@account_id, @job_id, @data, coalesce(sqlc.narg('now')::timestamptz, now()))
ON CONFLICT (job_id) DO NOTHING;

-- name: SequenceSendData :one
-- A step send's .Event data, read by the executor as it renders the step.
SELECT data FROM sequence_send_data WHERE account_id = @account_id AND job_id = @job_id;

-- name: SequenceSendsDeleteRetired :execrows
-- Sequence retention: up to n settled step sends of enrollments that ended before
-- cutoff, with their event data. SKIP LOCKED keeps replicas off each other's
-- batch. Not a tenant query: the executors' maintenance runs it for every account.
WITH doomed AS (
    SELECT s.id, s.job_id
    FROM sequence_enrollments e
    JOIN sequence_steps st ON st.sequence_id = e.sequence_id
    JOIN sends s ON s.campaign_id = st.campaign_id AND s.subscriber_id = e.subscriber_id
    WHERE e.state <> 'active' AND e.finished_at < @cutoff::timestamptz
      AND s.status IN ('sent', 'failed', 'suppressed', 'cancelled', 'unknown')
    LIMIT @n
    FOR UPDATE OF s SKIP LOCKED
), gone_data AS (
    DELETE FROM sequence_send_data d USING doomed x WHERE d.job_id = x.job_id
)
DELETE FROM sends s USING doomed x WHERE s.id = x.id;

-- name: SequenceLogDeleteRetired :execrows
-- Sequence retention: up to n step log lines of enrollments that ended before
-- cutoff (their timelines, and what the per-step stats count). Not a tenant query.
DELETE FROM sequence_step_log l
WHERE l.id IN (
    SELECT x.id FROM sequence_enrollments e
    JOIN sequence_step_log x ON x.enrollment_id = e.id
    WHERE e.state <> 'active' AND e.finished_at < @cutoff::timestamptz
    LIMIT @n);

-- name: TrackEventsDeleteRetired :execrows
-- Sequence retention: up to n tracked events posted before cutoff; a replay of a
-- deleted event's id is a new event. Not a tenant query.
DELETE FROM track_events t
WHERE (t.account_id, t.event_id) IN (
    SELECT x.account_id, x.event_id FROM track_events x WHERE x.created_at < @cutoff::timestamptz
    ORDER BY x.created_at LIMIT @n);

-- name: SequenceListArchivedWithActive :many
-- Archived sequences that still have running enrollments to end
-- (SequenceExitArchived), through sequence_enrollments_active_idx. Not a tenant
-- query: the executors' maintenance.
SELECT q.id, q.account_id FROM sequences q
WHERE q.status = 'archived'
  AND EXISTS (SELECT 1 FROM sequence_enrollments e WHERE e.sequence_id = q.id AND e.state = 'active')
LIMIT 100;
