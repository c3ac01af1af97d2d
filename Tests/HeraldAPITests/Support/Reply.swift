import Foundation
import HTTPTypes
import HeraldAPI
import HummingbirdTesting
import NIOCore
import Testing

/// One HTTP answer, decoded for assertions.
struct Reply: Sendable {
    var status: Int
    var headers: HTTPFields
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (or `[:]`).
    var json: [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:]
    }

    /// The `Error` code of seed 000's error body; records an issue when the body is not that
    /// format (exactly two string members).
    var errorCode: String {
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
        guard let object, object.count == 2, let code = object["Error"] as? String, object["ErrorDescription"] is String else {
            Issue.record("not the error format: \(status) \(text.prefix(300))")
            return ""
        }
        return code
    }
}

/// Sends requests to the API under test: in process (HummingbirdTesting's router framework)
/// or over a socket to a running `herald api`.
struct APIClient: Sendable {
    let execute: @Sendable (HTTPRequest.Method, String, HTTPFields, ByteBuffer?) async throws -> Reply

    init(_ client: any TestClientProtocol) {
        execute = { method, uri, headers, body in
            let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
            return Reply(status: Int(response.status.code), headers: response.headers, body: Array(buffer: response.body))
        }
    }

    init(live client: TestClient) {
        execute = { method, uri, headers, body in
            let response = try await client.execute(.init(uri, method: method, headers: headers, body: body))
            return Reply(status: Int(response.status.code), headers: response.headers, body: response.body.map { Array(buffer: $0) } ?? [])
        }
    }

    /// Sends `json` (a JSON text) or raw `bytes`, with `Authorization: Bearer token` when given.
    @discardableResult
    func send(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = nil, json: String? = nil, bytes: [UInt8]? = nil,
        headers extra: HTTPFields = [:]
    ) async throws -> Reply {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(string: json)
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        } else if let bytes {
            body = ByteBuffer(bytes: bytes)
        }
        return try await execute(method, uri, headers, body)
    }
}
