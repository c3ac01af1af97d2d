-- Herald schema, version 3: answers for a support desk ("did user X get the push for message
-- Y?") and the unread badge (seed 000, requirement 8). Applied once, in one transaction, after
-- 0002; never edit it after it has shipped.

-- Per message, written by the claim in the same statement as the row itself (no extra write):
-- how many deliveries it planned, so that a lookup can tell "claimed, no outcome yet" from
-- "never planned". Written only on the rare AvoidDublication path: how many repeats of it were
-- dropped, and the last time. NULL in all three costs nothing (the row has a null bitmap
-- already).
ALTER TABLE messages
    ADD COLUMN planned        integer,
    ADD COLUMN repeats        integer,
    ADD COLUMN last_repeat_at timestamptz;

-- "Was this message dead-lettered?" by its key.
CREATE INDEX dead_letters_message_key ON dead_letters (message_key) WHERE message_key IS NOT NULL;

-- What each user of a device has read (seed 000 requirement 8, the multi-wallet case of seed
-- 000): the device's last notification position that user reported as read. Written by the
-- API when the app reports; read by the claim, with the device's other rows, to put the
-- unread count on each push. One row per (device, user) that ever reported a read.
CREATE TABLE device_reads (
    device_ref bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    user_id    text COLLATE "C" NOT NULL,
    position   bigint NOT NULL CHECK (position >= 0),
    read_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (device_ref, user_id)
);
