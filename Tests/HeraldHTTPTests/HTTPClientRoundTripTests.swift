import Foundation
import HTTPTypes
import HeraldHTTP
import HeraldSandbox
import Testing

@Suite("HTTPClient request and response round trip", .timeLimit(.minutes(1)))
struct HTTPClientRoundTripTests {
    @Test("Method, headers, body and status go out and come back")
    func echo() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let body = Array("{\"aps\":{\"alert\":\"hi\"}}".utf8) + [0, 255, 10]
                let request = HTTPClientRequest(
                    method: .post,
                    url: "\(server.baseURL)/echo",
                    headerFields: HTTPFields([
                        "X-Status": "201", "x-token": "abc", "x-name": TestRoutes.unicodeValue, "x-empty": "", "content-type": "application/json",
                    ]),
                    body: body
                )
                let response = try await client.execute(request)
                #expect(response.status == 201)
                #expect(response.body == body)
                #expect(response.version == .http2)
                #expect(response.localPort != nil)
                #expect(response.headerFields["X-Method"] == "POST")
                #expect(response.headerFields["x-version"] == "HTTP/2")
                #expect(response.headerFields["echo-x-token"] == "abc")
                #expect(response.headerFields["echo-x-name"] == TestRoutes.unicodeValue)
                #expect(response.headerFields["echo-x-empty"] == "")
                #expect(response.headerFields["content-length"] == "\(body.count)")
                #expect(response.headerFields.allSatisfy { $0.name.rawName == $0.name.rawName.lowercased() }, "HTTP/2 header names are lowercase")

                for method in [HTTPRequest.Method.put, .patch, .delete, .get] {
                    let echoed = try await client.execute(
                        HTTPClientRequest(method: method, url: "\(server.baseURL)/echo", body: method == .get ? [] : [1, 2, 3]))
                    #expect(echoed.headerFields["x-method"] == method.rawValue)
                    #expect(echoed.body == (method == .get ? [] : [1, 2, 3]))
                }
                let head = try await client.execute(HTTPClientRequest(method: .head, url: "\(server.baseURL)/hello"))
                #expect(head.status == 200)
                #expect(head.body.isEmpty)
            }
        }
    }

    @Test("The server tells handlers which connection and stream carried a request")
    func requestMetadata() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let first = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                let second = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                #expect(first.headerFields["x-connection"] == "1")
                #expect(second.headerFields["x-connection"] == "1")
                let streams = [first, second].compactMap { $0.headerFields["x-stream"].flatMap(Int.init) }
                #expect(streams.count == 2)
                #expect(streams.allSatisfy { $0 % 2 == 1 }, "client streams have odd ids: \(streams)")
                #expect(Set(streams).count == 2)
                #expect(first.localPort == second.localPort)
                #expect(first.connectionsOpened == 1)
                #expect(second.connectionsOpened == 0)
            }
        }
    }

    @Test("Statuses are responses, not errors")
    func statuses() async throws {
        try await withServer(tls: nil) { server in
            try await withClient(HTTPClientConfiguration(httpVersion: .http2PriorKnowledge)) { client in
                for status in [204, 400, 403, 404, 410, 429, 500, 503] {
                    let response = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/status/\(status)"))
                    #expect(response.status.code == status)
                }
                #expect(client.statistics.requestsFailed == 0)
            }
        }
    }

    @Test("Non-ASCII header values and repeated headers arrive intact")
    func unicodeHeaders() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let response = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/unicode"))
                #expect(response.headerFields["X-UNICODE"] == TestRoutes.unicodeValue)
                #expect(response.headerFields.values(for: "x-multi") == ["one", "two"])
            }
        }
    }

    @Test("1 MiB bodies go both ways")
    func largeBodies() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let download = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/big"))
                #expect(download.status == 200)
                #expect(download.body.count == TestRoutes.bigBody.count)
                #expect(download.body == TestRoutes.bigBody)

                let upload = try await client.execute(HTTPClientRequest(method: .post, url: "\(server.baseURL)/echo", body: TestRoutes.bigBody))
                #expect(upload.body == TestRoutes.bigBody)
            }
            try await withClient(trustingConfiguration(fixture) { $0.maxResponseBodySize = 64 * 1024 }) { client in
                await expectHTTPError(.responseTooLarge) {
                    _ = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/big"))
                }
                let status = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello")).status
                #expect(status == 200)
            }
        }
    }

    @Test("HTTP/1.1 when asked for, and h2c with prior knowledge")
    func versions() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture) { $0.httpVersion = .http1_1 }) { client in
                let response = try await client.execute(HTTPClientRequest(method: .post, url: "\(server.baseURL)/echo", body: Array("one".utf8)))
                #expect(response.version == .http1_1)
                #expect(response.headerFields["x-version"] == "HTTP/1.1")
                #expect(response.bodyText == "one")
            }
            #expect(server.ledger.snapshot().connections.first?.applicationProtocol == "http/1.1")
        }
        try await withServer(tls: nil) { server in
            try await withClient(HTTPClientConfiguration(httpVersion: .http2PriorKnowledge)) { client in
                let response = try await client.execute(HTTPClientRequest(url: "\(server.baseURL)/hello"))
                #expect(response.version == .http2)
                #expect(response.bodyText == "hello")
            }
            #expect(server.ledger.snapshot().connections.first?.applicationProtocol == "h2c")
        }
    }

    @Test("Header values cannot inject headers; bad URLs are refused before sending")
    func invalidRequests() async throws {
        let fixture = try TLSFixture.make()
        defer { fixture.cleanup() }
        // swift-http-types cannot hold a name that is not a token, and turns CR/LF into spaces.
        #expect(HTTPField.Name("bad name") == nil)
        try await withServer(tls: fixture) { server in
            try await withClient(trustingConfiguration(fixture)) { client in
                let evil = HTTPFields(["x-evil": "a\r\nx-injected: b"])
                let response = try await client.execute(HTTPClientRequest(method: .post, url: "\(server.baseURL)/echo", headerFields: evil))
                #expect(response.headerFields["echo-x-evil"] == "a  x-injected: b")
                #expect(response.headerFields["echo-x-injected"] == nil)
            }
        }
        try await withClient(HTTPClientConfiguration()) { client in
            await expectHTTPError(.invalidRequest) {
                _ = try await client.execute(HTTPClientRequest(url: ""))
            }
            await expectHTTPError(.invalidRequest) {
                _ = try await client.execute(HTTPClientRequest(url: "https://localhost/a b"))
            }
        }
    }

    @Test("Error descriptions show the origin only; debug descriptions the whole URL")
    func errorRedaction() {
        let error = HTTPClientError(
            code: .timeout,
            call: "curl_multi_info_read",
            curlCode: 28,
            curlMessage: "Timeout was reached",
            url: "https://user:secret@api.push.apple.com:443/3/device/0123456789abcdef?x=1"
        )
        #expect("\(error)".contains("https://api.push.apple.com:443"))
        #expect(!"\(error)".contains("0123456789abcdef"))
        #expect(!"\(error)".contains("secret"))
        #expect(error.debugDescription.contains("/3/device/0123456789abcdef"))
    }
}
