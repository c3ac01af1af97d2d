import Foundation
import HeraldHTTP
import HeraldSandbox
import Synchronization
import Testing

/// A temporary folder with a fresh CA and server certificate (`ca.pem`, `cert.pem`, `key.pem`),
/// removed by `cleanup()`.
struct TLSFixture: Sendable {
    let certificate: SelfSignedCertificate
    let directory: URL
    let files: SelfSignedCertificate.Files

    static func make(hosts: [String] = ["localhost", "127.0.0.1"]) throws -> TLSFixture {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("herald-http-tests-\(UUID().uuidString)")
        let certificate = try SelfSignedCertificate.generate(hosts: hosts)
        let files = try certificate.write(to: directory)
        return TLSFixture(certificate: certificate, directory: directory, files: files)
    }

    func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }

    func cleanup() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Counts requests that reached a handler, so tests can wait until the server has them.
final class ArrivalCounter: Sendable {
    private let count = Mutex(0)

    func increment() {
        count.withLock { $0 += 1 }
    }

    var value: Int {
        count.withLock { $0 }
    }
}

/// The routes the tests use.
enum TestRoutes {
    /// 1 MiB of a repeating pattern.
    static let bigBody: [UInt8] = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    static let unicodeValue = "Привет, мир ✓ Zoë"

    /// - `/hello`: 200 "hello"
    /// - `/echo`: the request body back, status from `x-status` (default 200), request headers
    ///   `x-*` echoed as `echo-x-*`
    /// - `/sleep?ms=N`: answers after N ms (returns early if cancelled)
    /// - `/status/N`: status N
    /// - `/big`: 1 MiB body
    /// - `/unicode`: non-ASCII header values
    /// - `/whoami`: the client certificate's subject in `x-client-subject`
    static func handler(arrivals: ArrivalCounter? = nil) -> HTTP2Server.Handler {
        { request in
            arrivals?.increment()
            let path = request.path
            if path == "/hello" {
                return .text("hello", headers: [("x-connection", "\(request.connectionID)"), ("x-stream", "\(request.streamID)")])
            }
            if path == "/echo" {
                var headers: [(name: String, value: String)] = [
                    ("x-method", request.method), ("x-version", request.httpVersion),
                ]
                for field in request.headers where field.name.lowercased().hasPrefix("x-") {
                    headers.append(("echo-\(field.name.lowercased())", field.value))
                }
                let status = request.header("x-status").flatMap(Int.init) ?? 200
                return ServerResponse(status: status, headers: headers, body: request.body)
            }
            if path.hasPrefix("/sleep") {
                let milliseconds = path.split(separator: "=").last.flatMap { Int($0) } ?? 1000
                try? await Task.sleep(for: .milliseconds(milliseconds))
                return .text("slept")
            }
            if path.hasPrefix("/status/") {
                let status = Int(path.dropFirst("/status/".count)) ?? 500
                return .text("status \(status)", status: status)
            }
            if path == "/big" {
                return ServerResponse(status: 200, headers: [("content-type", "application/octet-stream")], body: bigBody)
            }
            if path == "/unicode" {
                return ServerResponse(status: 200, headers: [("x-unicode", unicodeValue), ("x-multi", "one"), ("x-multi", "two")])
            }
            if path == "/whoami" {
                let subject = request.clientCertificateSubject ?? "none"
                return ServerResponse(status: 200, headers: [("x-client-subject", subject)])
            }
            return .text("not found", status: 404)
        }
    }
}

/// Runs `body` with a started server and always shuts the server down afterwards.
func withServer(
    tls fixture: TLSFixture?,
    maxConcurrentStreams: Int = 1000,
    allowHTTP1: Bool = true,
    clientCertificateTrustPEM: String? = nil,
    handler: @escaping HTTP2Server.Handler = TestRoutes.handler(),
    _ body: (HTTP2Server) async throws -> Void
) async throws {
    let server = try await HTTP2Server.start(
        configuration: HTTP2ServerConfiguration(
            tls: fixture.map {
                HTTP2ServerConfiguration.TLS($0.certificate, allowHTTP1: allowHTTP1, clientCertificateTrustPEM: clientCertificateTrustPEM)
            },
            maxConcurrentStreams: maxConcurrentStreams
        ),
        handler: handler
    )
    do {
        try await body(server)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// Runs `body` with a client and always shuts the client down afterwards.
func withClient(
    _ configuration: HTTPClientConfiguration,
    _ body: (HTTPClient) async throws -> Void
) async throws {
    let client = try HTTPClient(configuration: configuration)
    do {
        try await body(client)
    } catch {
        await client.shutdown()
        throw error
    }
    await client.shutdown()
}

/// A client configuration that trusts the fixture's CA.
func trustingConfiguration(_ fixture: TLSFixture, _ adjust: (inout HTTPClientConfiguration) -> Void = { _ in }) -> HTTPClientConfiguration {
    var configuration = HTTPClientConfiguration(tls: .init(caFile: fixture.files.caCertificate.path))
    adjust(&configuration)
    return configuration
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// Expects `body` to throw an `HTTPClientError` with `code`, and returns it.
@discardableResult
func expectHTTPError(
    _ code: HTTPClientError.Code,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> Void
) async -> HTTPClientError? {
    do {
        try await body()
        Issue.record("expected HTTPClientError.\(code), but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as HTTPClientError {
        #expect(error.code == code, "\(error.debugDescription)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected HTTPClientError.\(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
