/// How ``TokenIntrospector`` reaches the introspection endpoint: one HTTP POST. HeraldAPI
/// has no HTTP client of its own (it imports only HeraldCore and HeraldStore); the `herald`
/// executable passes one over HeraldHTTP, tests pass a fake.
///
/// Implementations are `Sendable`, honour `timeout`, and throw on any transport failure
/// (connection refused, TLS, timeout): the introspector answers 503 then.
public protocol IntrospectionTransport: Sendable {
    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async throws -> IntrospectionHTTPResponse
}

/// The endpoint's answer: status and body.
public struct IntrospectionHTTPResponse: Sendable {
    public var status: Int
    public var body: [UInt8]

    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}
