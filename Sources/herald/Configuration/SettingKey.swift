/// One configuration key. Every key can be set in the configuration file (`section.name`,
/// as YAML `section: { name: value }`), as the environment variable `HERALD_<SECTION>_<NAME>`,
/// and, for the keys a command exposes, as a flag. The registry below is the single list of
/// keys: the file is checked against it, so a typo is an error rather than a silent default.
struct SettingKey: Sendable, Hashable, CustomStringConvertible {
    let section: String
    let name: String
    let help: String
    /// Secrets are never printed, not even in error messages.
    let isSecret: Bool
    /// The long flag of the commands that expose the key (`--database-url`), for the hints that
    /// tell an operator how to set it; nil when no command does. A test checks each against the
    /// commands' ArgumentParser definitions.
    let flag: String?

    init(_ section: String, _ name: String, secret: Bool = false, flag: String? = nil, help: String) {
        self.section = section
        self.name = name
        self.help = help
        self.isSecret = secret
        self.flag = flag
    }

    var dotted: String { "\(section).\(name)" }
    var environmentName: String { "HERALD_\(section.uppercased())_\(name.uppercased())" }
    var description: String { dotted }

    static func == (lhs: SettingKey, rhs: SettingKey) -> Bool { lhs.dotted == rhs.dotted }
    func hash(into hasher: inout Hasher) { hasher.combine(dotted) }
}

extension SettingKey {
    // MARK: amqp
    static let amqpURL = SettingKey(
        "amqp", "url", secret: true, flag: "--amqp-url", help: "Broker URL, amqp://user:password@host:port/vhost (amqps:// for TLS).")
    static let amqpQueue = SettingKey("amqp", "queue", flag: "--queue", help: "Queue the workers consume (default w1.pushnotification).")
    static let amqpExchange = SettingKey(
        "amqp", "exchange", flag: "--exchange", help: "Exchange producers publish to (default herald, a durable direct exchange).")
    static let amqpRoutingKey = SettingKey("amqp", "routing_key", flag: "--routing-key", help: "Routing key binding the queue (default w1.pushnotification).")
    static let amqpQueueType = SettingKey("amqp", "queue_type", help: "classic or quorum, used when Herald declares the queue (default classic).")
    static let amqpPrefetch = SettingKey("amqp", "prefetch", flag: "--prefetch", help: "Unacknowledged messages a worker holds at once (default 300).")
    static let amqpHeartbeat = SettingKey("amqp", "heartbeat", help: "Heartbeat interval, e.g. 30s (default 30s).")

    // MARK: database
    static let databaseURL = SettingKey(
        "database", "url", secret: true, flag: "--database-url", help: "PostgreSQL URL, postgres://user:password@host:port/database.")
    static let databasePoolSize = SettingKey("database", "pool_size", help: "Connections per process (default 4).")

    // MARK: worker
    static let workerThreads = SettingKey(
        "worker", "threads", flag: "--threads",
        help:
            "Lanes (the seed's number of threads): users whose notifications are in flight at once (default: what the sender carries at once, 400 for APNs and FCM; 64 for log and null)."
    )
    static let workerSender = SettingKey(
        "worker", "sender", flag: "--sender",
        help:
            "Where payloads go: providers (APNs and FCM), log or null. No default: herald worker, serve and drain refuse to start without it; herald api resends through log when unset."
    )
    static let workerLogSenderFile = SettingKey(
        "worker", "log_sender_file", flag: "--log-sender-file", help: "File the log sender appends to (default standard output).")
    static let workerShutdownTimeout = SettingKey(
        "worker", "shutdown_timeout", help: "Longest graceful shutdown before in-flight work is requeued (default 30s).")
    static let workerDedupeRetention = SettingKey(
        "worker", "dedupe_retention", help: "How long message keys are remembered for AvoidDublication (default 24h).")
    static let workerMaxAttempts = SettingKey(
        "worker", "max_attempts", help: "Attempts per delivery before it is recorded as failed (default 8); the provider's own faults do not count.")
    static let workerMaxRetryDelay = SettingKey("worker", "max_retry_delay", help: "Longest wait between two attempts (default 5m).")
    static let workerPayloadProfile = SettingKey(
        "worker", "payload_profile", flag: "--profile", help: "Payload shapes: legacy (seed 000) or modern (default legacy).")
    static let workerLegacyBadge = SettingKey(
        "worker", "legacy_badge",
        help: "Legacy payloads carry the unread count too (aps.badge, FCM data.badge); the modern profile always does (default false).")
    static let workerLegacyExtras = SettingKey(
        "worker", "legacy_extras",
        help:
            "Legacy payloads add aps.sound, the target screen (aps.acme_screen, FCM data.screen) and the Android channel (FCM data.channel); false sends seed 000's exact bytes (default true)."
    )
    static let workerPartitions = SettingKey(
        "worker", "partitions", flag: "--partitions",
        help:
            "Partition queues that keep each user's order across worker processes; 0 = off (default 0). Every process of an installation must use the same value."
    )
    static let workerBroadcastCache = SettingKey(
        "worker", "broadcast_cache", help: "How long the device list of a broadcast is reused (default 2s; 0 reads it every time).")
    static let workerCircuitFailures = SettingKey(
        "worker", "circuit_failures",
        help:
            "Provider faults (5xx, no connection, timeouts) within 10s, at least half of the answers, that open a provider's circuit breaker: its deliveries then wait in the broker (default 10; 0 = never open)."
    )
    static let workerCircuitOpen = SettingKey(
        "worker", "circuit_open", help: "How long an open circuit breaker waits before it probes the provider (default 2s; doubles after each failed probe).")
    static let workerCircuitMaxOpen = SettingKey(
        "worker", "circuit_max_open", help: "Longest wait between two probes of a failing provider (default 4s with the backlog, 60s without it).")
    static let workerCircuitSlow = SettingKey(
        "worker", "circuit_slow",
        help: "A provider answer slower than this counts as a fault for its circuit breaker; the push itself stays sent (default 1s; 0 = never).")
    static let workerBacklog = SettingKey(
        "worker", "backlog",
        help:
            "Queue a busy user's waiting deliveries in PostgreSQL and acknowledge their messages, so that one user's burst holds back nobody else (default true)."
    )
    static let workerBacklogAfter = SettingKey(
        "worker", "backlog_after", help: "How many of a user's deliveries may wait in memory before the next ones are queued in the backlog (default 64).")
    static let workerBacklogWindow = SettingKey(
        "worker", "backlog_window", help: "How many queued deliveries of one user are kept in memory and read back at a time (default 32).")
    static let workerBacklogMemory = SettingKey(
        "worker", "backlog_memory", help: "How many queued deliveries of all users together are kept in memory (default 8192).")
    static let workerBroadcastMemory = SettingKey(
        "worker", "broadcast_memory",
        help:
            "Broadcasts are selected in memory while there are at most this many subscriptions; past it they are written down and sent in windows, with flat memory (default 100000; 0: always in windows)."
    )
    static let workerBroadcastWindow = SettingKey(
        "worker", "broadcast_window", help: "Devices per window of a broadcast sent in windows (default 1000; 4 windows at once).")
    static let workerMetricsListen = SettingKey(
        "worker", "metrics_listen", help: "host:port where herald worker serves /metrics, /healthz and /readyz (default: none).")

    // MARK: templates
    static let templatesDefaultCulture = SettingKey(
        "templates", "default_culture", flag: "--default-culture", help: "Culture used when a device's culture has no template (default ru-RU).")

    // MARK: apns
    static let apnsKeyPath = SettingKey("apns", "key_path", help: "Token auth: the .p8 signing key from Apple.")
    static let apnsKeyID = SettingKey("apns", "key_id", help: "Token auth: the key's id (10 characters).")
    static let apnsTeamID = SettingKey("apns", "team_id", help: "Token auth: the Apple developer team id (10 characters).")
    static let apnsTopic = SettingKey("apns", "topic", help: "Bundle id(s), comma separated; the first is the default app.")
    static let apnsEnvironment = SettingKey("apns", "environment", help: "production or sandbox (default production).")
    static let apnsURL = SettingKey("apns", "url", help: "Overrides the provider URL (for the local sandbox).")
    static let apnsCertPath = SettingKey("apns", "cert_path", help: "Certificate auth: .p12 file, or PEM certificate.")
    static let apnsCertKeyPath = SettingKey("apns", "cert_key_path", help: "Certificate auth: PEM private key when cert_path is PEM.")
    static let apnsCertPassword = SettingKey("apns", "cert_password", secret: true, help: "Certificate auth: password of the .p12 or the key.")
    static let apnsCAPath = SettingKey("apns", "ca_path", help: "Extra CA certificate to trust (for the local sandbox).")

    // MARK: fcm
    static let fcmServiceAccountPath = SettingKey(
        "fcm", "service_account_path", help: "Service-account JSON key file(s), comma separated; one per Firebase project.")
    static let fcmURL = SettingKey("fcm", "url", help: "Overrides the FCM base URL (for the local sandbox).")
    static let fcmCAPath = SettingKey("fcm", "ca_path", help: "Extra CA certificate to trust (for the local sandbox).")

    // MARK: proxy
    static let proxyURL = SettingKey("proxy", "url", help: "HTTP(S) proxy for APNs and FCM, http://host:port.")
    static let proxyUser = SettingKey("proxy", "user", help: "Proxy user name.")
    static let proxyPassword = SettingKey("proxy", "password", secret: true, help: "Proxy password.")

    // MARK: api
    static let apiListen = SettingKey("api", "listen", flag: "--listen", help: "Address the REST API listens on (default 127.0.0.1:8080).")
    static let apiJWTSecret = SettingKey("api", "jwt_secret", secret: true, help: "HS256 secret for bearer JWTs.")
    static let apiJWTPublicKeyPath = SettingKey("api", "jwt_public_key_path", help: "RS256/ES256 public key (PEM) for bearer JWTs.")
    static let apiIntrospectionURL = SettingKey("api", "introspection_url", help: "OAuth2 token introspection endpoint (RFC 7662) for opaque tokens.")
    static let apiIntrospectionClientID = SettingKey("api", "introspection_client_id", help: "Client id for the introspection endpoint.")
    static let apiIntrospectionClientSecret = SettingKey(
        "api", "introspection_client_secret", secret: true, help: "Client secret for the introspection endpoint.")
    static let apiIntrospectionCacheTTL = SettingKey(
        "api", "introspection_cache_ttl", help: "How long an active introspection answer is reused, at most 60s (default 30s).")
    static let apiIntrospectionTimeout = SettingKey(
        "api", "introspection_timeout", help: "Longest wait for the introspection endpoint before answering 503 (default 5s).")
    static let apiJWTLeeway = SettingKey("api", "jwt_leeway", help: "Clock skew allowed on JWT exp and nbf (default 30s).")
    static let apiJWTIssuer = SettingKey("api", "jwt_issuer", help: "When set, a JWT's iss must equal it.")
    static let apiJWTAudience = SettingKey("api", "jwt_audience", help: "When set, a JWT's aud must contain it.")
    static let apiLegacyBasePath = SettingKey(
        "api", "legacy_base_path", help: "Prefix of Subscribe.ashx and Unsubscribe.ashx, e.g. /PushNotification (default: none).")
    static let apiMaxBodyBytes = SettingKey("api", "max_body_bytes", help: "Largest request body; larger gets 413 (default 65536).")
    static let apiRateLimitPerSecond = SettingKey(
        "api", "rate_limit_per_second", help: "Requests per second per user, refilled continuously; 0 disables (default 10).")
    static let apiRateLimitBurst = SettingKey("api", "rate_limit_burst", help: "Requests a user may make at once (default 40).")
    static let apiResendSummaryThreshold = SettingKey(
        "api", "resend_summary_threshold", help: "More missed pushes than this are replaced by one summary push on resend (default 10).")
    static let apiResendSummaryEvent = SettingKey(
        "api", "resend_summary_event", help: "Template event id of the summary push; {0} is the count (default MissedNotifications).")
    static let apiBadgeSync = SettingKey(
        "api", "badge_sync", help: "A read reported on one device counts on the user's other devices, which get a badge-only push (default false).")
    static let apiAdminToken = SettingKey(
        "api", "admin_token", secret: true,
        help: "Bearer key of the operators' /v1/admin routes (at least 32 characters); app users' tokens never open them (default: none, the routes are off).")
    static let apiResendPayloadProfile = SettingKey(
        "api", "resend_payload_profile", help: "Payload profile of the summary push: legacy or modern (default legacy).")

    // MARK: log
    static let logLevel = SettingKey("log", "level", flag: "--log-level", help: "trace, debug, info, notice, warning, error or critical (default info).")
    static let logFormat = SettingKey("log", "format", help: "text or json (default text).")

    /// Every key Herald knows. The configuration file may only use these.
    static let all: [SettingKey] = [
        .amqpURL, .amqpQueue, .amqpExchange, .amqpRoutingKey, .amqpQueueType, .amqpPrefetch, .amqpHeartbeat,
        .databaseURL, .databasePoolSize,
        .workerThreads, .workerSender, .workerLogSenderFile, .workerShutdownTimeout, .workerDedupeRetention,
        .workerMaxAttempts, .workerMaxRetryDelay, .workerPayloadProfile, .workerBroadcastCache, .workerBroadcastMemory, .workerBroadcastWindow,
        .workerMetricsListen, .workerPartitions,
        .workerLegacyBadge, .workerLegacyExtras, .workerCircuitFailures, .workerCircuitOpen, .workerCircuitMaxOpen, .workerCircuitSlow,
        .workerBacklog, .workerBacklogAfter, .workerBacklogWindow, .workerBacklogMemory,
        .templatesDefaultCulture,
        .apnsKeyPath, .apnsKeyID, .apnsTeamID, .apnsTopic, .apnsEnvironment, .apnsURL, .apnsCertPath,
        .apnsCertKeyPath, .apnsCertPassword, .apnsCAPath,
        .fcmServiceAccountPath, .fcmURL, .fcmCAPath,
        .proxyURL, .proxyUser, .proxyPassword,
        .apiListen, .apiJWTSecret, .apiJWTPublicKeyPath, .apiIntrospectionURL, .apiIntrospectionClientID,
        .apiIntrospectionClientSecret, .apiIntrospectionCacheTTL, .apiIntrospectionTimeout, .apiJWTLeeway, .apiJWTIssuer,
        .apiJWTAudience, .apiLegacyBasePath, .apiMaxBodyBytes, .apiRateLimitPerSecond, .apiRateLimitBurst,
        .apiResendSummaryThreshold, .apiResendSummaryEvent, .apiResendPayloadProfile, .apiAdminToken, .apiBadgeSync,
        .logLevel, .logFormat,
    ]

    static func named(_ dotted: String) -> SettingKey? {
        all.first { $0.dotted == dotted }
    }
}
