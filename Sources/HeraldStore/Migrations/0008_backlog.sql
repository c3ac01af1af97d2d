-- Herald schema, version 8: the per-user backlog (docs/architecture.md, "The backlog"). Applied
-- once, in one transaction, after 0007; never edit it after it has shipped.
--
-- A delivery that must wait behind its user's earlier one (same user, same platform) is queued
-- here, durably, and its message is acknowledged: a busy user's pushes wait in the database, not
-- in the broker's prefetch window, so they hold back nobody else. The worker that holds the
-- backlog lock sends them in `seq` order as the user's previous push ends, reading them back a
-- window at a time. Its journal row says 'queued' meanwhile (a redelivered copy of the message
-- leaves it to the backlog); the row that records its outcome deletes it from here in the same
-- transaction.
ALTER TABLE journal DROP CONSTRAINT journal_state_check;
ALTER TABLE journal ADD CONSTRAINT journal_state_check
    CHECK (state IN ('pending', 'sent', 'token_dead', 'failed', 'deferred', 'queued'));

CREATE TABLE backlog (
    -- The user and platform whose order the row keeps (`<user id>/<platform>`).
    order_key  text COLLATE "C" NOT NULL,
    -- Its place in that order: places are numbered by the one worker that holds the backlog.
    seq        bigint NOT NULL,
    device_ref bigint NOT NULL,
    position   bigint NOT NULL,
    queued_at  timestamptz NOT NULL DEFAULT now(),
    -- Everything needed to send it without its message (event, rendered texts, recipient), as
    -- JSON: the message was acknowledged when this row committed.
    delivery   text NOT NULL,
    PRIMARY KEY (order_key, seq)
);
