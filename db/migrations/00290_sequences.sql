-- Sequences: automated emails on triggers and delays, every step exactly once.
--
-- A sequence is a trigger and ordered steps (send, wait, condition,
-- wait_for_event), kept as JSON on the row and checked by the API. Each send step
-- is carried by a campaigns row of kind 'sequence' (sequence_steps), 'sending'
-- while the sequence is active and 'paused' while it is paused, so the executor
-- claims its send rows exactly as a campaign's: the claim's campaign guard stops
-- a paused sequence, and fairness, rate limits, sender routing, the lease, the
-- acknowledgement, the rescuer, ambiguous_policy and the exclusions at claim
-- (suppressed, no longer confirmed, left the list) are the campaigns'. A step's
-- send is a sends row with job_id 'sequence:<sequence>:<step>:<subscriber>':
-- sends_job_id_key (UNIQUE over every job id that is not a campaign's) makes it
-- exist at most once, whatever re-triggers, crashes or replicas do.
--
-- Waiting is an enrollment row with a due time. The advancer claims due
-- enrollments of every account in one statement (sequence_enrollments_due_idx),
-- never a timer in memory: a deploy or a kill -9 during a wait changes nothing.

-- +goose Up
ALTER TABLE campaigns DROP CONSTRAINT campaigns_kind_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_kind_check CHECK (kind IN ('campaign', 'messages', 'sequence'));
ALTER TABLE campaigns DROP CONSTRAINT campaigns_stream_sending;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_stream_sending
    CHECK (kind = 'campaign' OR status IN ('sending', 'cancelled') OR (kind = 'sequence' AND status = 'paused'));

CREATE TABLE sequences (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name          text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    status        text        NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'paused', 'archived')),
    -- manual: POST /v1/sequences/{id}/enroll only; list_joined: joined list_id;
    -- confirmed: confirmed while a member of list_id; event: POST /v1/track with event_name.
    trigger_type  text        NOT NULL CHECK (trigger_type IN ('manual', 'list_joined', 'confirmed', 'event')),
    -- The sequence's list: what list_joined/confirmed watch, and what an opt-out
    -- leaves (its step campaigns' list_ids, so leaving it stops the sequence's sends).
    list_id       bigint      REFERENCES lists (id) ON DELETE SET NULL,
    event_name    text        CHECK (length(event_name) BETWEEN 1 AND 200),
    -- The zone of time-of-day waits when the subscriber has no valid
    -- attributes.timezone.
    time_zone     text        NOT NULL DEFAULT 'UTC',
    -- A send step reached later than this after it fell due is skipped (NULL: never too late).
    late_after    interval,
    steps         jsonb       NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(steps) = 'array'),
    -- list_joined/confirmed: the trigger sweep's watermark.
    swept_at      timestamptz,
    activated_at  timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX sequences_account_id_idx ON sequences (account_id, id);
CREATE INDEX sequences_event_idx ON sequences (account_id, event_name) WHERE status = 'active' AND trigger_type = 'event';

-- The campaign that carries each send step (by position in steps).
CREATE TABLE sequence_steps (
    sequence_id bigint NOT NULL REFERENCES sequences (id) ON DELETE CASCADE,
    position    integer NOT NULL CHECK (position >= 0),
    account_id  bigint NOT NULL,
    campaign_id bigint NOT NULL,
    PRIMARY KEY (sequence_id, position),
    FOREIGN KEY (account_id, campaign_id) REFERENCES campaigns (account_id, id) ON DELETE CASCADE
);

-- One enrollment per (sequence, subscriber): a re-trigger finds it and adds nothing.
CREATE TABLE sequence_enrollments (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    sequence_id   bigint      NOT NULL REFERENCES sequences (id) ON DELETE CASCADE,
    -- No foreign key: the record of what a deleted subscriber was sent stays.
    subscriber_id bigint      NOT NULL,
    email         text        NOT NULL,
    -- The next step to evaluate (a position in steps; past the end: done).
    step          integer     NOT NULL DEFAULT 0 CHECK (step >= 0),
    state         text        NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'completed', 'exited')),
    -- When the step is due (a wait's end, a wait_for_event's timeout).
    due_at        timestamptz NOT NULL,
    -- The event a wait_for_event step waits for, and whether it came.
    waiting_for   text,
    event_seen    boolean     NOT NULL DEFAULT false,
    -- The trigger's (and awaited events') data, for conditions.
    data          jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object'),
    trigger       text        NOT NULL,
    exit_reason   text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    UNIQUE (sequence_id, subscriber_id)
);
-- The advancer's claim: due active enrollments, account by account (a loose scan
-- over account_id, then the oldest due of each).
CREATE INDEX sequence_enrollments_due_idx ON sequence_enrollments (account_id, due_at, id) WHERE state = 'active';
-- POST /v1/track wakes a subscriber's enrollments waiting for the event.
CREATE INDEX sequence_enrollments_waiting_idx ON sequence_enrollments (account_id, subscriber_id)
    WHERE state = 'active' AND waiting_for IS NOT NULL;
CREATE INDEX sequence_enrollments_email_idx ON sequence_enrollments (sequence_id, lower(email));

-- What happened at each step of each enrollment: the timeline and the per-step stats.
CREATE TABLE sequence_step_log (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id    bigint      NOT NULL,
    sequence_id   bigint      NOT NULL REFERENCES sequences (id) ON DELETE CASCADE,
    enrollment_id bigint      NOT NULL REFERENCES sequence_enrollments (id) ON DELETE CASCADE,
    step          integer     NOT NULL,
    outcome       text        NOT NULL CHECK (outcome IN ('entered', 'sent', 'skipped', 'waiting', 'passed', 'exited', 'completed')),
    reason        text,
    job_id        text,
    at            timestamptz NOT NULL
);
CREATE INDEX sequence_step_log_enrollment_idx ON sequence_step_log (enrollment_id, id);
CREATE INDEX sequence_step_log_stats_idx ON sequence_step_log (sequence_id, step, outcome);

-- Custom events posted to /v1/track, idempotent by the event's own id.
CREATE TABLE track_events (
    account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    event_id      text        NOT NULL CHECK (length(event_id) BETWEEN 1 AND 200),
    name          text        NOT NULL,
    email_lower   text        NOT NULL,
    subscriber_id bigint,
    data          jsonb       NOT NULL DEFAULT '{}',
    enrolled      integer     NOT NULL DEFAULT 0,
    woke          integer     NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, event_id)
);

-- The list_joined/confirmed sweep: memberships that became subscribed lately
-- (a join to a single opt-in list, a confirmation on a double opt-in one).
CREATE INDEX list_members_subscribed_at_idx ON list_members (list_id, status_at) WHERE status = 'subscribed';

-- +goose Down
DROP INDEX list_members_subscribed_at_idx;
DROP TABLE track_events;
DROP TABLE sequence_step_log;
DROP TABLE sequence_enrollments;
DROP TABLE sequence_steps;
DROP TABLE sequences;
DELETE FROM campaigns WHERE kind = 'sequence';
ALTER TABLE campaigns DROP CONSTRAINT campaigns_stream_sending;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_stream_sending CHECK (kind = 'campaign' OR status IN ('sending', 'cancelled'));
ALTER TABLE campaigns DROP CONSTRAINT campaigns_kind_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_kind_check CHECK (kind IN ('campaign', 'messages'));
