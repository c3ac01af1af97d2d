-- Herald schema, version 7: an event may name the Android notification channel it is shown on
-- (templates/events.json `androidChannel`; docs/formats.md, "Payloads"). Applied once, in one
-- transaction, after 0006; never edit it after it has shipped. NULL: the event names none and
-- the app shows it on its default channel, as every event before this version.
ALTER TABLE event_metadata ADD COLUMN android_channel text;
