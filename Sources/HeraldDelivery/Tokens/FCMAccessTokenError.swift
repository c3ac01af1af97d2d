import HeraldSupport

/// The OAuth2 token endpoint did not give an access token. Its description names the endpoint,
/// the status and Google's error code, never the assertion or a token.
public struct FCMAccessTokenError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public typealias Code = ErrorCode<FCMAccessTokenError>

    public var code: Code
    public var tokenURI: String
    public var status: Int?
    public var detail: String

    public init(_ code: Code, tokenURI: String, status: Int? = nil, detail: String) {
        self.code = code
        self.tokenURI = tokenURI
        self.status = status
        self.detail = detail
    }

    public var description: String {
        "OAuth2 token exchange at \(tokenURI) failed (\(code)\(status.map { ", status \($0)" } ?? "")): \(detail)"
    }

    public var debugDescription: String { "FCMAccessTokenError(\(description))" }
}

extension ErrorCode where Domain == FCMAccessTokenError {
    /// The endpoint could not be reached (network, TLS, timeout).
    public static let unreachable = Self("unreachable")
    /// The endpoint answered with an error (`invalid_grant`: wrong key, clock skew…).
    public static let refused = Self("refused")
    /// A 200 answer without an access token.
    public static let invalidResponse = Self("invalidResponse")
}
