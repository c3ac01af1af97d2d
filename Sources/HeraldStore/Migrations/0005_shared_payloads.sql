-- Herald schema, version 5: a payload that many deliveries of one message share is stored once.
-- Applied once, in one transaction, after 0004; never edit it after it has shipped.
--
-- A broadcast sends the same body to every device of a platform (legacy profile, no badge): the
-- journal kept it once per delivery, 100,000 copies for a broadcast to 100,000 devices. Now the
-- deliveries of a record batch that share one message and one payload (three or more) keep it
-- once here, keyed by its digest, and their journal rows name the digest instead
-- (DeliveryJournal.record; docs/architecture.md, "The journal"). A row keeps `payload` or
-- `payload_digest`, never both.
CREATE TABLE message_payloads (
    message_id bigint NOT NULL,
    -- The first 16 bytes of the SHA-256 of the payload: equal digests are equal payloads.
    digest     uuid NOT NULL,
    payload    text NOT NULL,
    PRIMARY KEY (message_id, digest)
);
ALTER TABLE journal ADD COLUMN payload_digest uuid;
