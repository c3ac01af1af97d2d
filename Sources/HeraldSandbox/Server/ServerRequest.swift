import X509

/// One request as the ``HTTP2Server`` received it, body complete.
public struct ServerRequest: Sendable {
    public let method: String
    /// The request target: path and query (`:path` in HTTP/2).
    public let path: String
    /// The `:authority` (HTTP/2) or `Host` (HTTP/1.1), if sent.
    public let authority: String?
    /// Header fields in the order received; names are lowercase over HTTP/2.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]
    /// The accepted TCP connection that carried the request: 1, 2, 3… in accept order.
    public let connectionID: Int
    /// The HTTP/2 stream id (odd numbers chosen by the client); over HTTP/1.1, the request's
    /// position on its connection (1, 2, 3…).
    public let streamID: Int
    /// `"HTTP/2"` or `"HTTP/1.1"`.
    public let httpVersion: String
    /// The client certificate, when the server requires one.
    public let clientCertificate: Certificate?

    public init(
        method: String,
        path: String,
        authority: String? = nil,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        connectionID: Int = 0,
        streamID: Int = 0,
        httpVersion: String = "HTTP/2",
        clientCertificate: Certificate? = nil
    ) {
        self.method = method
        self.path = path
        self.authority = authority
        self.headers = headers
        self.body = body
        self.connectionID = connectionID
        self.streamID = streamID
        self.httpVersion = httpVersion
        self.clientCertificate = clientCertificate
    }

    /// The first value of header `name`, compared without regard to (ASCII) case.
    public func header(_ name: String) -> String? {
        headers.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of header `name`, compared without regard to (ASCII) case.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// ASCII case-insensitive equality without allocating (header names are ASCII tokens).
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return a.utf8.elementsEqual(b.utf8) { x, y in
            x == y || (x | 0x20 == y | 0x20 && (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(x | 0x20))
        }
    }

    /// The client certificate's subject as text (`UID=…,CN=…`), when there is one.
    public var clientCertificateSubject: String? {
        clientCertificate.map { String(describing: $0.subject) }
    }

    /// The body decoded as UTF-8 (invalid bytes become replacement characters).
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }
}
