-- Herald schema, version 10: broadcasts sent in windows (docs/architecture.md, "Broadcasts").
-- Applied once, in one transaction, after 0009; never edit it after it has shipped.
--
-- A broadcast to more devices than a worker keeps in memory is acknowledged to the broker once
-- this row is committed, and then read and sent a window of devices at a time, in device order.
-- `cursor` is the last device whose window is done (every delivery terminal or durably queued);
-- `claimed` the last device of a window that was started: after a crash, the windows between
-- the two are checked against the journal (what was sent is skipped, the rest sent again with
-- the same collapse id). One worker runs a broadcast at a time: the holder of an unexpired
-- lease; a lease that ran out (its worker died) is taken over.
CREATE TABLE broadcasts (
    message_id    bigint PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    -- What the worker needs to render it again after a restart: the message as received.
    body          bytea NOT NULL,
    content_type  text,
    -- A partition copy (worker.partitions): its partition and the partition count.
    part          integer,
    parts         integer,
    state         text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done')),
    cursor        bigint NOT NULL DEFAULT 0,
    claimed       bigint NOT NULL DEFAULT 0,
    -- Devices selected in the windows done so far (the audience, once done).
    selected      bigint NOT NULL DEFAULT 0,
    holder        text,
    lease_until   timestamptz NOT NULL DEFAULT now(),
    created_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);
-- Unfinished broadcasts, for takeover.
CREATE INDEX broadcasts_running ON broadcasts (lease_until) WHERE state = 'running';
