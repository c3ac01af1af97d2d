/// An FCM HTTP v1 error: the `errorCode` of the `google.firebase.fcm.v1.FcmError` detail when
/// the answer has one, else the canonical `status` (`UNAUTHENTICATED`, `NOT_FOUND`…). A struct
/// with static members, so that a code Google adds later is still a value.
public struct FCMErrorCode: Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    // FcmError codes (firebase.google.com/docs/reference/fcm/rest/v1/ErrorCode)
    public static let unspecifiedError = FCMErrorCode("UNSPECIFIED_ERROR")
    public static let invalidArgument = FCMErrorCode("INVALID_ARGUMENT")
    public static let unregistered = FCMErrorCode("UNREGISTERED")
    public static let senderIDMismatch = FCMErrorCode("SENDER_ID_MISMATCH")
    public static let quotaExceeded = FCMErrorCode("QUOTA_EXCEEDED")
    public static let unavailable = FCMErrorCode("UNAVAILABLE")
    public static let `internal` = FCMErrorCode("INTERNAL")
    public static let thirdPartyAuthError = FCMErrorCode("THIRD_PARTY_AUTH_ERROR")
    // Canonical statuses seen without an FcmError detail
    public static let notFound = FCMErrorCode("NOT_FOUND")
    public static let unauthenticated = FCMErrorCode("UNAUTHENTICATED")
    public static let permissionDenied = FCMErrorCode("PERMISSION_DENIED")
    public static let resourceExhausted = FCMErrorCode("RESOURCE_EXHAUSTED")
}
