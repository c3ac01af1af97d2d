-- Herald schema, version 1. Applied once by MigrationRunner inside one transaction; never edit
-- this file after it has shipped: later changes are new numbered files.
--
-- Conventions: text + CHECK instead of enum types (adding a value needs no type migration);
-- the hot tables (deliveries, notification_log, dedupe_keys) have no foreign keys, because a
-- foreign-key check locks the referenced row and costs a lookup per inserted row; they are
-- cleaned up by retention instead, through BRIN indexes on their time columns (rows arrive
-- in time order; a BRIN index costs next to nothing per insert, a B-tree one more descent).
-- Identifiers that are looked up on the hot path are COLLATE "C": byte comparison, whatever
-- the database's locale.

-- Devices: one row per app installation (hardware id, unique per app).
CREATE TABLE devices (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The app the token belongs to (APNs bundle id / FCM project alias); 'default' is the
    -- installation's default app.
    app               text COLLATE "C" NOT NULL DEFAULT 'default',
    device_id         text COLLATE "C" NOT NULL,
    platform          text NOT NULL CHECK (platform IN ('ios', 'android')),
    -- NULL: no token (unsubscribed with seed 001's "none", or moved to another device).
    token             text COLLATE "C",
    culture           text NOT NULL,
    token_state       text NOT NULL DEFAULT 'active' CHECK (token_state IN ('active', 'dead')),
    token_dead_reason text,
    token_dead_at     timestamptz,
    badge             integer NOT NULL DEFAULT 0,
    -- The position the next fresh delivery to this device takes (seed 002's per-device
    -- numbering). Only DeliveryJournal changes it, under the row lock.
    next_position     bigint NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    UNIQUE (app, device_id)
) WITH (fillfactor = 80); -- room for HOT updates of next_position

-- A token belongs to one installation: subscribing with it elsewhere takes it away from here.
CREATE INDEX devices_app_token ON devices (app, token) WHERE token IS NOT NULL;

-- The users subscribed on a device (several wallets on one phone).
CREATE TABLE device_users (
    device_ref    bigint NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
    user_id       text COLLATE "C" NOT NULL,
    -- NULL: every tag. Otherwise only these (never empty: a link without tags is deleted).
    tags          text[] CHECK (tags IS NULL OR cardinality(tags) > 0),
    -- Tags unsubscribed from while subscribed to every tag.
    excluded_tags text[] NOT NULL DEFAULT '{}',
    zone_id       text,
    branch_id     text,
    subscribed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (device_ref, user_id)
);
-- By user: subscriptions(forUsers:), and keyset pages of every subscription.
CREATE INDEX device_users_user ON device_users (user_id, device_ref);

-- Per-user settings from the app ("Settings > Notifications"). No row: the defaults.
CREATE TABLE user_settings (
    user_id        text COLLATE "C" PRIMARY KEY,
    pushes_enabled boolean NOT NULL DEFAULT true,
    muted_tags     text[] NOT NULL DEFAULT '{}',
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Templates: HeraldCore's EventMetadata per event and Template texts per event x culture x platform.
CREATE TABLE event_metadata (
    event_id      text PRIMARY KEY,
    tag           text,
    category      text,
    target_screen text,
    priority      text NOT NULL CHECK (priority IN ('high', 'normal')),
    sound         text,
    is_private    boolean NOT NULL,
    is_silent     boolean NOT NULL,
    ttl_seconds   integer,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE templates (
    event_id   text NOT NULL REFERENCES event_metadata (event_id) ON DELETE CASCADE,
    culture    text NOT NULL,
    platform   text NOT NULL CHECK (platform IN ('ios', 'android')),
    title      text NOT NULL,
    body       text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, culture, platform)
);

-- Event dedupe keys (seed 000's AvoidDublication), kept for the configured retention.
CREATE TABLE dedupe_keys (
    key        text COLLATE "C" PRIMARY KEY,
    first_seen timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX dedupe_keys_expires ON dedupe_keys USING brin (expires_at);

-- The delivery journal: one row per delivery key (message x device x addressed user).
-- Updates touch only unindexed columns, so they are HOT.
CREATE TABLE deliveries (
    delivery_key text COLLATE "C" PRIMARY KEY,
    message_key  text NOT NULL,
    user_id      text NOT NULL,
    device_ref   bigint NOT NULL,
    position     bigint NOT NULL,
    state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'token_dead', 'failed')),
    attempts     integer NOT NULL DEFAULT 0,
    last_error   text,
    claimed_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 90);
CREATE INDEX deliveries_claimed_at ON deliveries USING brin (claimed_at);

-- What was sent to each device, by position: `/v1/devices/{id}/notifications?after=N`.
CREATE TABLE notification_log (
    device_ref   bigint NOT NULL,
    position     bigint NOT NULL,
    delivery_key text NOT NULL,
    user_id      text NOT NULL,
    event_id     text,
    -- The exact payload sent to the provider.
    payload      text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (device_ref, position)
);
CREATE INDEX notification_log_expires ON notification_log USING brin (expires_at);

-- Messages sent to the dead-letter queue, with the reason, for `herald dlq list|replay`.
CREATE TABLE dead_letters (
    id          text PRIMARY KEY,
    message_key text,
    queue       text NOT NULL,
    error_code  text NOT NULL,
    reason      text NOT NULL,
    event_id    text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    replayed_at timestamptz
);
CREATE INDEX dead_letters_created ON dead_letters (created_at);

-- Change notifications for the caches. Channel herald_devices carries one user id per
-- notification ('*' means "everyone": flush the whole cache); herald_templates carries ''.
-- A transaction may set herald.defer_notify = 'on' (SET LOCAL) to silence the per-row
-- notifications and send '*' itself, as bulk imports do.
CREATE FUNCTION herald_notify_user_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('herald.defer_notify', true) = 'on' THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('herald_devices', NEW.user_id);
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('herald_devices', OLD.user_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER device_users_notify AFTER INSERT OR UPDATE OR DELETE ON device_users
    FOR EACH ROW EXECUTE FUNCTION herald_notify_user_change();
CREATE TRIGGER user_settings_notify AFTER INSERT OR UPDATE OR DELETE ON user_settings
    FOR EACH ROW EXECUTE FUNCTION herald_notify_user_change();

-- A device change reaches its users' subscriptions. Only the columns a Subscription shows
-- fire it: DeliveryJournal's next_position updates never do.
CREATE FUNCTION herald_notify_device_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('herald.defer_notify', true) = 'on' THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('herald_devices', du.user_id) FROM device_users du WHERE du.device_ref = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER devices_notify AFTER UPDATE OF app, device_id, platform, token, culture, token_state ON devices
    FOR EACH ROW
    WHEN (OLD.app IS DISTINCT FROM NEW.app OR OLD.device_id IS DISTINCT FROM NEW.device_id
          OR OLD.platform IS DISTINCT FROM NEW.platform OR OLD.token IS DISTINCT FROM NEW.token
          OR OLD.culture IS DISTINCT FROM NEW.culture OR OLD.token_state IS DISTINCT FROM NEW.token_state)
    EXECUTE FUNCTION herald_notify_device_change();

CREATE FUNCTION herald_notify_templates_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('herald_templates', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER templates_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON templates
    FOR EACH STATEMENT EXECUTE FUNCTION herald_notify_templates_change();
CREATE TRIGGER event_metadata_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON event_metadata
    FOR EACH STATEMENT EXECUTE FUNCTION herald_notify_templates_change();

-- Claims a batch of deliveries in one call (DeliveryJournal.claim). Returns one row per input
-- element, by ordinal:
--   outcome 'fresh'          new row; pos is the device's next position (consecutive, in input
--                            order, for several fresh claims of one device)
--   outcome 'pending'        claimed before and not recorded since: pos and attempts as stored
--   outcome 'sent' | 'token_dead' | 'failed'   already terminal
--   outcome 'unknown_device' no such device (deleted since the subscription was read)
-- A key repeated within the batch is fresh once; its later copies answer 'pending'.
CREATE FUNCTION herald_claim_deliveries(
    p_keys text[], p_message_keys text[], p_user_ids text[], p_apps text[], p_device_ids text[]
) RETURNS TABLE (ord bigint, outcome text, pos bigint, attempts integer)
LANGUAGE plpgsql
-- Every statement here looks up a few hundred rows by key. On a small table the planner
-- prefers a sequential scan filtered by the whole key array, which costs O(table) per call.
SET enable_seqscan = off
AS $$
DECLARE
    refs bigint[];         -- devices.id per element, NULL for an unknown device
    locked_ids bigint[];   -- the batch's devices, in id order
    locked_next bigint[];  -- their next_position, read under the lock
BEGIN
    -- 1. Each element's device, by index lookups (the LATERAL ... LIMIT 1 keeps the planner
    --    from turning a few hundred probes into a scan of the whole table).
    SELECT array_agg(l.id ORDER BY x.ord) INTO refs
    FROM unnest(p_apps, p_device_ids) WITH ORDINALITY AS x(app, device_id, ord)
    LEFT JOIN LATERAL (
        SELECT d.id FROM devices d WHERE d.app = x.app AND d.device_id = x.device_id LIMIT 1
    ) l ON true;

    -- 2. Lock them in id order: concurrent claims for one device queue here (so they cannot
    --    both insert a key), and batches cannot deadlock on each other. A row changed while we
    --    waited is returned in its latest version, so next_position is current.
    SELECT array_agg(s.id), array_agg(s.next_position) INTO locked_ids, locked_next
    FROM (SELECT d.id, d.next_position FROM devices d WHERE d.id = ANY (refs) ORDER BY d.id FOR NO KEY UPDATE) s;

    -- 3. A new statement, so a new snapshot: it sees every claim committed before the locks.
    RETURN QUERY
    WITH input AS (
        SELECT u.ord, u.key, u.message_key, u.user_id, u.device_ref,
               locked_next[array_position(locked_ids, u.device_ref)] AS next_position,
               row_number() OVER (PARTITION BY u.key ORDER BY u.ord) AS copy
        FROM unnest(p_keys, p_message_keys, p_user_ids, refs) WITH ORDINALITY AS u(key, message_key, user_id, device_ref, ord)
    ),
    existing AS (
        SELECT dl.delivery_key, dl.state, dl.position, dl.attempts
        FROM deliveries dl
        WHERE dl.delivery_key = ANY (p_keys)
    ),
    fresh AS (
        SELECT i.key, i.message_key, i.user_id, i.device_ref,
               i.next_position + row_number() OVER (PARTITION BY i.device_ref ORDER BY i.ord) - 1 AS position
        FROM input i
        LEFT JOIN existing e ON e.delivery_key = i.key
        WHERE i.copy = 1 AND i.next_position IS NOT NULL AND e.delivery_key IS NULL
    ),
    inserted AS (
        INSERT INTO deliveries (delivery_key, message_key, user_id, device_ref, position)
        SELECT f.key, f.message_key, f.user_id, f.device_ref, f.position FROM fresh f
        RETURNING delivery_key, position
    ),
    bumped AS (
        UPDATE devices d SET next_position = c.last + 1
        FROM (SELECT f.device_ref, max(f.position) AS last FROM fresh f GROUP BY f.device_ref) c
        WHERE d.id = c.device_ref
    )
    SELECT i.ord,
           CASE
               WHEN e.delivery_key IS NOT NULL THEN e.state
               WHEN n.delivery_key IS NOT NULL AND i.copy = 1 THEN 'fresh'
               WHEN n.delivery_key IS NOT NULL THEN 'pending'
               ELSE 'unknown_device'
           END,
           coalesce(e.position, n.position),
           coalesce(e.attempts, 0)
    FROM input i
    LEFT JOIN existing e ON e.delivery_key = i.key
    LEFT JOIN inserted n ON n.delivery_key = i.key
    ORDER BY i.ord;
END
$$;

-- Records a batch of delivery outcomes in one call (DeliveryJournal.record). Only pending
-- deliveries change (a terminal state is final, so a repeated record is a no-op). For 'sent'
-- the payload is appended to the notification log at the delivery's position; for
-- 'token_dead' the device's token is marked dead if it is still the token that was used.
-- Returns the number of deliveries updated.
CREATE FUNCTION herald_record_deliveries(
    p_keys text[], p_states text[], p_attempts bigint[], p_errors text[],
    p_event_ids text[], p_payloads text[], p_tokens text[], p_log_retention_seconds bigint
) RETURNS bigint
LANGUAGE plpgsql
SET enable_seqscan = off  -- as for herald_claim_deliveries
AS $$
DECLARE
    updated_count bigint;
BEGIN
    -- Devices whose token may die are locked in id order, as claims lock them.
    IF 'token_dead' = ANY (p_states) THEN
        PERFORM 1 FROM devices d
        WHERE d.id IN (
            SELECT dl.device_ref FROM deliveries dl
            JOIN unnest(p_keys, p_states) AS x(key, state) ON dl.delivery_key = x.key
            WHERE x.state = 'token_dead' AND dl.state = 'pending'
        )
        ORDER BY d.id
        FOR NO KEY UPDATE;
    END IF;

    WITH input AS (
        SELECT DISTINCT ON (u.key) u.*
        FROM unnest(p_keys, p_states, p_attempts, p_errors, p_event_ids, p_payloads, p_tokens)
             WITH ORDINALITY AS u(key, state, attempts, error, event_id, payload, token, ord)
        ORDER BY u.key, u.ord DESC
    ),
    updated AS (
        UPDATE deliveries dl
        SET state = i.state, attempts = i.attempts, last_error = i.error, updated_at = now()
        FROM input i
        WHERE dl.delivery_key = i.key AND dl.state = 'pending'
        RETURNING dl.delivery_key, dl.device_ref, dl.position, dl.user_id, dl.state
    ),
    logged AS (
        INSERT INTO notification_log (device_ref, position, delivery_key, user_id, event_id, payload, expires_at)
        SELECT u.device_ref, u.position, u.delivery_key, u.user_id, i.event_id, i.payload,
               now() + make_interval(secs => p_log_retention_seconds)
        FROM updated u JOIN input i ON i.key = u.delivery_key
        WHERE u.state = 'sent' AND i.payload IS NOT NULL
        ON CONFLICT (device_ref, position) DO NOTHING
    ),
    killed AS (
        UPDATE devices d
        SET token_state = 'dead', token_dead_reason = i.error, token_dead_at = now(), updated_at = now()
        FROM updated u JOIN input i ON i.key = u.delivery_key
        WHERE u.state = 'token_dead' AND d.id = u.device_ref
          AND d.token = i.token AND d.token_state = 'active'
    )
    SELECT count(*) INTO updated_count FROM updated;
    RETURN updated_count;
END
$$;
