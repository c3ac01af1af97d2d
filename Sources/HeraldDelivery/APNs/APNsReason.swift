/// A reason string from an APNs error response (`{"reason":"BadDeviceToken"}`), every one Apple
/// documents as a static member. A struct, so that a reason Apple adds later is still a value
/// (its raw string) rather than a decoding failure.
public struct APNsReason: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    // 400
    public static let badCollapseId = APNsReason("BadCollapseId")
    public static let badDeviceToken = APNsReason("BadDeviceToken")
    public static let badExpirationDate = APNsReason("BadExpirationDate")
    public static let badMessageId = APNsReason("BadMessageId")
    public static let badPriority = APNsReason("BadPriority")
    public static let badTopic = APNsReason("BadTopic")
    public static let deviceTokenNotForTopic = APNsReason("DeviceTokenNotForTopic")
    public static let duplicateHeaders = APNsReason("DuplicateHeaders")
    public static let idleTimeout = APNsReason("IdleTimeout")
    public static let invalidPushType = APNsReason("InvalidPushType")
    public static let missingDeviceToken = APNsReason("MissingDeviceToken")
    public static let missingTopic = APNsReason("MissingTopic")
    public static let payloadEmpty = APNsReason("PayloadEmpty")
    public static let topicDisallowed = APNsReason("TopicDisallowed")
    // 403
    public static let badCertificate = APNsReason("BadCertificate")
    public static let badCertificateEnvironment = APNsReason("BadCertificateEnvironment")
    public static let expiredProviderToken = APNsReason("ExpiredProviderToken")
    public static let forbidden = APNsReason("Forbidden")
    public static let invalidProviderToken = APNsReason("InvalidProviderToken")
    public static let missingProviderToken = APNsReason("MissingProviderToken")
    public static let unrelatedKeyIdInToken = APNsReason("UnrelatedKeyIdInToken")
    // 404, 405
    public static let badPath = APNsReason("BadPath")
    public static let methodNotAllowed = APNsReason("MethodNotAllowed")
    // 410
    public static let expiredToken = APNsReason("ExpiredToken")
    public static let unregistered = APNsReason("Unregistered")
    // 413
    public static let payloadTooLarge = APNsReason("PayloadTooLarge")
    // 429
    public static let tooManyProviderTokenUpdates = APNsReason("TooManyProviderTokenUpdates")
    public static let tooManyRequests = APNsReason("TooManyRequests")
    // 500, 503
    public static let internalServerError = APNsReason("InternalServerError")
    public static let serviceUnavailable = APNsReason("ServiceUnavailable")
    public static let shutdown = APNsReason("Shutdown")

    /// Every documented reason, for tests and the sandbox.
    public static let documented: [APNsReason] = [
        .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic, .deviceTokenNotForTopic,
        .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken, .missingTopic, .payloadEmpty, .topicDisallowed,
        .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken, .missingProviderToken,
        .unrelatedKeyIdInToken, .badPath, .methodNotAllowed, .expiredToken, .unregistered, .payloadTooLarge,
        .tooManyProviderTokenUpdates, .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown,
    ]

    /// Reasons that mean the provider token must be made again.
    public var requiresNewProviderToken: Bool {
        self == .expiredProviderToken || self == .invalidProviderToken
    }
}
