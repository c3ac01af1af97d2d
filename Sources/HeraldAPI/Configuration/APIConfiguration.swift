import HeraldCore

/// Everything HeraldAPI needs to know, with safe defaults. The `herald` executable builds it
/// from its configuration (`api.*` keys); the library never reads the environment.
///
/// Secure by default: ``authentication`` must name at least one way to check bearer tokens
/// (``validate()`` refuses none), bodies are limited to 64 KB and each user is rate limited.
public struct APIConfiguration: Sendable {
    /// Host and port to listen on.
    public var host: String
    public var port: Int
    /// Prefix of the legacy endpoints: `<legacyBasePath>/Subscribe.ashx` (seed 000's
    /// `<BaseUrl>`). Empty: at the root. Starts with `/` and has no trailing `/` otherwise.
    public var legacyBasePath: String
    /// Largest request body accepted; larger → 413 `body_too_large`.
    public var maxBodyBytes: Int
    public var limits: ValidationLimits
    /// Per-user token bucket; `nil` disables rate limiting.
    public var rateLimit: RateLimitConfiguration?
    public var authentication: AuthenticationConfiguration
    public var resend: ResendConfiguration
    /// The operators' routes (`/v1/admin/…`); `nil`: not served (404).
    public var admin: AdminConfiguration?
    /// When the app reports a read on one device, the same notifications count as read on the
    /// user's other devices, which get a badge-only push with their new unread count (through
    /// the resend handler; `api.badge_sync`). Off by default.
    public var badgeSync = false

    public init(authentication: AuthenticationConfiguration) {
        self.host = "127.0.0.1"
        self.port = 8080
        self.legacyBasePath = ""
        self.maxBodyBytes = 64 * 1024
        self.limits = ValidationLimits()
        self.rateLimit = RateLimitConfiguration()
        self.authentication = authentication
        self.resend = ResendConfiguration()
    }

    /// - Throws: ``APIConfigurationError`` naming the field.
    public func validate() throws(APIConfigurationError) {
        guard (0...65535).contains(port) else { throw APIConfigurationError("port must be between 0 and 65535") }
        guard legacyBasePath.isEmpty || (legacyBasePath.hasPrefix("/") && !legacyBasePath.hasSuffix("/")) else {
            throw APIConfigurationError("legacyBasePath must be empty or start with '/' and not end with '/'")
        }
        guard maxBodyBytes >= 1024 else { throw APIConfigurationError("maxBodyBytes must be at least 1024") }
        guard limits.maxTags >= 1, limits.maxTagLength >= 1, limits.maxDeviceIdLength >= 1 else {
            throw APIConfigurationError("validation limits must be at least 1")
        }
        if let rateLimit {
            guard rateLimit.requestsPerSecond > 0, rateLimit.burst >= 1, rateLimit.maxTrackedUsers >= 1 else {
                throw APIConfigurationError("rate limit: requestsPerSecond must be positive, burst and maxTrackedUsers at least 1")
            }
        }
        try authentication.validate()
        guard resend.summaryThreshold >= 1, resend.maxEntries >= resend.summaryThreshold else {
            throw APIConfigurationError("resend: summaryThreshold must be at least 1 and at most maxEntries")
        }
        if let admin {
            guard admin.token.utf8.count >= 32 else { throw APIConfigurationError("the admin token must be at least 32 characters") }
            guard admin.partitions >= 0 else { throw APIConfigurationError("admin: partitions must not be negative") }
        }
    }
}

/// The operators' support routes: `GET /v1/admin/messages/{messageId}` and
/// `GET /v1/admin/users/{userId}/deliveries`. They take one bearer key of their own, never an
/// app user's token (those get 403).
public struct AdminConfiguration: Sendable {
    /// The bearer key (`api.admin_token`), at least 32 characters.
    public var token: String
    /// `worker.partitions`, so that a message's partition copies are found.
    public var partitions: Int

    public init(token: String, partitions: Int = 0) {
        self.token = token
        self.partitions = partitions
    }
}

/// Limits on what a request may contain (every failure is a 400 with its own code).
public struct ValidationLimits: Sendable {
    public var maxTags = 32
    /// Each tag: `[A-Za-z0-9_.:-]`, at most this many characters.
    public var maxTagLength = 64
    public var maxDeviceIdLength = 128
    /// Largest `limit` of `GET …/notifications`.
    public var maxPageSize = 100

    public init() {}
}

/// A per-user token bucket: `burst` requests at once, refilled at `requestsPerSecond`.
public struct RateLimitConfiguration: Sendable {
    public var requestsPerSecond: Double = 10
    public var burst: Int = 40
    /// Users whose buckets are remembered; beyond it the fullest buckets are forgotten first.
    public var maxTrackedUsers: Int = 100_000

    public init(requestsPerSecond: Double = 10, burst: Int = 40) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
    }
}

/// How `POST /v1/devices/{id}/notifications/resend` behaves.
public struct ResendConfiguration: Sendable {
    /// More missed notifications than this → one summary push instead (seed 002).
    public var summaryThreshold = 10
    /// The most log entries one request reads.
    public var maxEntries = 100
    /// Event id of the summary's template (`{0}` = how many were missed); without a template,
    /// a built-in text in Russian or English.
    public var summaryEventId = "MissedNotifications"
    /// Payload shape of the summary push (the resent ones are sent exactly as stored).
    public var payloadProfile: PayloadProfile = .legacy

    public init() {}
}

/// A configuration HeraldAPI refuses, with the reason.
public struct APIConfigurationError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension AdminConfiguration: CustomStringConvertible {
    /// Never the token.
    public var description: String { "AdminConfiguration(token: <redacted>, partitions: \(partitions))" }
}
