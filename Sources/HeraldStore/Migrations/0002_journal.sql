-- Herald schema, version 2: the write-once delivery journal (docs/architecture.md, "The
-- journal"). Applied once, in one transaction, after 0001; never edit it after it has shipped.
--
-- Version 1 wrote four rows per delivery: a `deliveries` row claimed before the send, the
-- device's `next_position`, the row's outcome update, and a `notification_log` row. Version 2
-- writes, per delivery, one `journal` row once its outcome is known (it is also the device's
-- notification-log entry) plus the device's position counter (reserved before the send, one
-- update per device per batch, in a narrow table of its own so that the devices table does not
-- churn); and per message one `messages` row, which both tells a redelivered, replayed or
-- repeated message from a new one and is what AvoidDublication compares with.

-- One row per message Herald started to deliver (per partition copy with worker.partitions).
CREATE TABLE messages (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The first 16 bytes of SHA-256 of the key text: a fixed-width unique key whatever the
    -- producer's message-id is like.
    key         uuid NOT NULL UNIQUE,
    -- The message key (AMQP message-id, or the SHA-256 of the body): what the delivery keys
    -- (collapse ids) of its deliveries are made of. `key` hashes it with "#p<p>/<K>" added for
    -- a partition copy, so that the copies of one message are told apart. A body hash (64
    -- lowercase hex digits) is kept as its 32 bytes in key_hash, anything else in key_text.
    key_text    text,
    key_hash    bytea CHECK ((key_text IS NULL) <> (key_hash IS NULL)),
    event_id    text,
    received_at timestamptz NOT NULL DEFAULT now()
);
-- Rows arrive in time order: a BRIN index finds expired messages for almost nothing per insert.
CREATE INDEX messages_received_at ON messages USING brin (received_at) WITH (autosummarize = on);

-- One row per delivery whose outcome is known: written once, when the provider answered for
-- good (sent, token dead, failed), when a send is first retried (state 'pending', updated
-- later), or when its provider's circuit breaker deferred it (state 'deferred': the message waits
-- in the broker's wait queue; updated when it is sent). Also the device's notification log, by position (seed 002): the payload of a sent
-- delivery is the body sent, less the FCM registration token.
CREATE TABLE journal (
    -- Fixed-width columns first, widest first: no alignment padding between them.
    device_ref  bigint NOT NULL,
    position    bigint NOT NULL,
    message_id  bigint NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    attempts    integer NOT NULL,
    -- The addressed user ('0' for a broadcast), as in the delivery key.
    user_id     text COLLATE "C" NOT NULL,
    -- The event id of a row migrated from version 1 whose message is unknown; the others have
    -- it on their message (one copy per message, not per delivery).
    event_id    text,
    state       text NOT NULL CHECK (state IN ('pending', 'sent', 'token_dead', 'failed', 'deferred')),
    -- The provider's id for the notification (apns-id, FCM message name), when it gave one.
    provider_id text,
    last_error  text,
    -- What was sent, less the FCM registration token (the log keeps no device tokens).
    payload     text,
    -- The delivery key of a row migrated from version 1 whose message is unknown; NULL for
    -- every other row, whose key is derived from its message's key_text, device and user.
    collapse_id text,
    PRIMARY KEY (device_ref, position)
);
-- The deliveries of a message (redelivered, replayed, or asked about): rows of one message are
-- written within moments of each other, so a BRIN range over message_id stays narrow.
CREATE INDEX journal_message_id ON journal USING brin (message_id) WITH (pages_per_range = 8, autosummarize = on);
CREATE INDEX journal_recorded_at ON journal USING brin (recorded_at) WITH (autosummarize = on);

-- Version 1's rows, kept: redelivered messages still find their deliveries, and apps their
-- notification logs. Message keys of partition copies were not kept apart in version 1; such a
-- copy redelivered after the upgrade counts as new and is sent again with the same collapse id.
INSERT INTO messages (key, key_text, received_at)
SELECT encode(substring(sha256(convert_to(message_key, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid, message_key, min(claimed_at)
FROM deliveries GROUP BY message_key;

UPDATE messages m SET event_id = l.event_id
FROM deliveries d JOIN notification_log l ON l.device_ref = d.device_ref AND l.position = d.position
WHERE m.key = encode(substring(sha256(convert_to(d.message_key, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid;

INSERT INTO journal (device_ref, position, message_id, user_id, state, attempts, recorded_at, last_error, payload, collapse_id)
SELECT d.device_ref, d.position, m.id, d.user_id, d.state, d.attempts, d.updated_at, d.last_error, l.payload, d.delivery_key
FROM deliveries d
JOIN messages m ON m.key = encode(substring(sha256(convert_to(d.message_key, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid
LEFT JOIN notification_log l ON l.device_ref = d.device_ref AND l.position = d.position;

-- Log entries that outlived their delivery row (the log is kept longer): message 0, unknown.
INSERT INTO journal (device_ref, position, message_id, user_id, event_id, state, attempts, recorded_at, payload, collapse_id)
SELECT l.device_ref, l.position, 0, l.user_id, l.event_id, 'sent', 1, l.created_at, l.payload, l.delivery_key
FROM notification_log l
ON CONFLICT (device_ref, position) DO NOTHING;

-- AvoidDublication keys still remembered.
INSERT INTO messages (key, key_text, received_at)
SELECT encode(substring(sha256(convert_to(key, 'UTF8')) FROM 1 FOR 16), 'hex')::uuid, key, first_seen
FROM dedupe_keys WHERE expires_at > now()
ON CONFLICT (key) DO NOTHING;

DROP FUNCTION herald_claim_deliveries(text[], text[], text[], text[], text[]);
DROP FUNCTION herald_record_deliveries(text[], text[], bigint[], text[], text[], text[], text[], bigint);
DROP TABLE deliveries, notification_log, dedupe_keys;

-- The position the next delivery to a device takes (seed 002), reserved by DeliveryJournal.claim
-- before the send: updated for every delivery, so kept apart from the devices row (whose other
-- columns change rarely and are scanned for broadcasts). Room on each page for HOT updates.
CREATE TABLE device_positions (
    device_ref    bigint PRIMARY KEY REFERENCES devices (id) ON DELETE CASCADE,
    next_position bigint NOT NULL DEFAULT 1
) WITH (fillfactor = 50);
INSERT INTO device_positions (device_ref, next_position) SELECT id, next_position FROM devices;
ALTER TABLE devices DROP COLUMN next_position;

CREATE FUNCTION herald_add_device_position() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO device_positions (device_ref) VALUES (NEW.id);
    RETURN NULL;
END
$$;

CREATE TRIGGER devices_position AFTER INSERT ON devices FOR EACH ROW EXECUTE FUNCTION herald_add_device_position();
