/// What a handler of the ``HTTP2Server`` answers. `content-length` is set by the server.
public struct ServerResponse: Sendable {
    public var status: Int
    /// Header fields to send, in order. Over HTTP/2 names are sent in lowercase.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int = 200, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A UTF-8 text response.
    public static func text(_ text: String, status: Int = 200, headers: [(name: String, value: String)] = []) -> ServerResponse {
        ServerResponse(status: status, headers: [("content-type", "text/plain; charset=utf-8")] + headers, body: Array(text.utf8))
    }

    /// A JSON response from already encoded bytes.
    public static func json(_ body: [UInt8], status: Int = 200, headers: [(name: String, value: String)] = []) -> ServerResponse {
        ServerResponse(status: status, headers: [("content-type", "application/json")] + headers, body: body)
    }
}
