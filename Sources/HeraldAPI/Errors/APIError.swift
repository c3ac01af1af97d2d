import Foundation
import Hummingbird

/// The one error type HeraldAPI's handlers throw. It renders itself as seed 000's error body,
/// `{"Error": "code", "ErrorDescription": "text"}`, with the status of its ``code``; handlers
/// just throw it, and ``APIErrorMiddleware`` turns anything else into one.
///
/// Redaction: ``message`` is written by HeraldAPI and never contains tokens, secrets, SQL or
/// request values beyond a field name; it is what the client sees. ``debugDescription`` adds
/// the underlying error (for logs, never for responses).
public struct APIError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public var code: Code
    /// What went wrong, for the client (`ErrorDescription`).
    public var message: String
    /// Seconds the client should wait (`Retry-After`), for 429 and 503 answers.
    public var retryAfterSeconds: Int?
    /// What caused it (its debug description), for the log only.
    public var underlying: String?
    /// The methods the route takes (`Allow`), for 405 answers.
    public var allow: [HTTPRequest.Method]

    public init(
        _ code: Code, _ message: String, retryAfterSeconds: Int? = nil, underlying: (any Error)? = nil, allow: [HTTPRequest.Method] = []
    ) {
        self.code = code
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
        self.underlying = underlying.map { String(reflecting: $0) }
        self.allow = allow
    }

    public var description: String { "APIError.\(code.rawValue) (\(code.status.code)): \(message)" }

    public var debugDescription: String {
        guard let underlying else { return description }
        return description + "\n  underlying: " + underlying
    }
}

extension APIError: HTTPResponseError {
    public var status: HTTPResponse.Status { code.status }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfterSeconds { headers[.retryAfter] = String(retryAfterSeconds) }
        if !allow.isEmpty { headers[.allow] = allow.map(\.rawValue).joined(separator: ", ") }
        if code == .unauthorized || code == .invalidToken || code == .tokenExpired {
            headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\""
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The JSON body: `{"Error": code, "ErrorDescription": message}`.
    public var body: [UInt8] {
        let object = ["Error": code.rawValue, "ErrorDescription": message]
        // Two string members cannot fail to encode.
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map(Array.init) ?? []
    }
}
