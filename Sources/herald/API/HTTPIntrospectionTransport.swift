import HTTPTypes
import HeraldAPI
import HeraldHTTP
import Logging

/// Carries HeraldAPI's token introspection requests over HeraldHTTP (libcurl; HTTP/1.1 for
/// `http://`, HTTP/2 or 1.1 for `https://`). The client's driver thread stops when the
/// transport is dropped.
struct HTTPIntrospectionTransport: IntrospectionTransport {
    let client: HTTPClient

    init(logger: Logger) throws {
        client = try HTTPClient(configuration: HTTPClientConfiguration(maxConnectionsPerHost: 4, maxResponseBodySize: 1 << 20), logger: logger)
    }

    func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Duration) async throws -> IntrospectionHTTPResponse {
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else {
                throw HTTPClientError(
                    code: .invalidRequest, call: "HTTPIntrospectionTransport.post", detail: "header name \"\(name)\" is not an HTTP token", url: url)
            }
            fields.append(HTTPField(name: name, value: value))
        }
        let response = try await client.execute(HTTPClientRequest(method: .post, url: url, headerFields: fields, body: body, timeout: timeout))
        return IntrospectionHTTPResponse(status: response.status.code, body: response.body)
    }
}
