import Hummingbird

extension APIError {
    /// An extensible error code (`Error` in the body) with its HTTP status: a struct with static
    /// members, so adding one breaks nobody. Every code is listed in docs/api.md.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public let status: HTTPResponse.Status

        public init(_ rawValue: String, status: HTTPResponse.Status) {
            self.rawValue = rawValue
            self.status = status
        }

        public var description: String { rawValue }

        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.rawValue == rhs.rawValue }
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

        // MARK: 400
        /// The body is not JSON, not an object, or a field has the wrong JSON type.
        public static let invalidJSON = Code("invalid_json", status: .badRequest)
        /// The body has a field this endpoint does not know.
        public static let unknownField = Code("unknown_field", status: .badRequest)
        /// A required field is missing.
        public static let missingField = Code("missing_field", status: .badRequest)
        /// `os` / `platform` is not `ios` or `android`.
        public static let invalidPlatform = Code("invalid_platform", status: .badRequest)
        /// `culture` is not `xx-XX`.
        public static let invalidCulture = Code("invalid_culture", status: .badRequest)
        /// The push token does not look like one of the platform's tokens.
        public static let invalidPushToken = Code("invalid_push_token", status: .badRequest)
        /// The device id is empty, too long, or has control characters.
        public static let invalidDeviceId = Code("invalid_device_id", status: .badRequest)
        /// Too many tags, a tag too long, or characters outside `[A-Za-z0-9_.:-]`.
        public static let invalidTags = Code("invalid_tags", status: .badRequest)
        /// A query parameter or another field is out of range.
        public static let invalidParameter = Code("invalid_parameter", status: .badRequest)

        // MARK: 401
        /// No `Authorization: Bearer …` header, or a malformed one.
        public static let unauthorized = Code("unauthorized", status: .unauthorized)
        /// The bearer token's signature, algorithm or claims are wrong, or introspection says
        /// it is not active.
        public static let invalidToken = Code("invalid_token", status: .unauthorized)
        /// The bearer token has expired (or is not valid yet).
        public static let tokenExpired = Code("token_expired", status: .unauthorized)

        // MARK: 403
        /// A valid app user's token on an operators' route (`/v1/admin/…`), which only the
        /// admin key opens.
        public static let forbidden = Code("forbidden", status: .forbidden)

        // MARK: 404, 405, 413, 415, 429
        /// No message with this key within the retention, and no dead letter of it.
        public static let messageNotFound = Code("message_not_found", status: .notFound)
        /// No such device for this user (another user's device is "not found" too).
        public static let deviceNotFound = Code("device_not_found", status: .notFound)
        /// No such route.
        public static let notFound = Code("not_found", status: .notFound)
        /// The route exists, not with this method.
        public static let methodNotAllowed = Code("method_not_allowed", status: .methodNotAllowed)
        /// The body is larger than the configured limit.
        public static let bodyTooLarge = Code("body_too_large", status: .contentTooLarge)
        /// The body is not `application/json`.
        public static let unsupportedMediaType = Code("unsupported_media_type", status: .unsupportedMediaType)
        /// Too many requests for this user; `Retry-After` says when to come back.
        public static let rateLimited = Code("rate_limited", status: .tooManyRequests)

        // MARK: 5xx
        /// Something unexpected; the log has the details, the response never does.
        public static let internalError = Code("internal_error", status: .internalServerError)
        /// The database is unreachable or timed out.
        public static let storeUnavailable = Code("store_unavailable", status: .serviceUnavailable)
        /// The token introspection endpoint is down or timed out (not the client's fault: 503,
        /// never 401).
        public static let authUnavailable = Code("auth_unavailable", status: .serviceUnavailable)
        /// A readiness check failed.
        public static let notReady = Code("not_ready", status: .serviceUnavailable)
        /// This process cannot send pushes (no resend handler configured).
        public static let resendUnavailable = Code("resend_unavailable", status: .serviceUnavailable)
    }
}
