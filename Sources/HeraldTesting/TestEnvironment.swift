import Foundation
import NIOCore
import NIOPosix
import Testing

/// Where the integration tests find the real RabbitMQ and PostgreSQL, and what happens when
/// they are not there.
///
/// `deploy/local/up.sh` starts both on loopback and writes these variables to
/// `$HERALD_LOCAL_DIR/env`; the defaults match its default ports. Every integration test first
/// calls ``require(_:)`` (through `TestDatabase.with`, `PrivateStack.start`, a fixture built on
/// them, or the `.requires(…)` trait). When a service does not accept connections, a plain
/// `swift test` cancels the test with a note saying it needs the service, so that the unit
/// tests run and pass anywhere; with `HERALD_TEST_REQUIRE_SERVICES` set (by
/// `deploy/local/test.sh`, hence CI) the test fails instead, naming the URL it tried.
public enum TestEnvironment {
    /// Set (to anything but `0`) to make a missing service fail the integration tests.
    public static let requireServicesVariable = "HERALD_TEST_REQUIRE_SERVICES"

    public static var amqpURL: String {
        value("HERALD_TEST_AMQP_URL") ?? "amqp://guest:guest@127.0.0.1:5672/"
    }

    public static var databaseURL: String {
        value("HERALD_TEST_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/herald_test"
    }

    /// `deploy/local/ctl.sh`, used by tests that restart the broker or the database.
    public static var stackControlScript: String {
        if let path = value("HERALD_TEST_STACK_CTL") { return path }
        return packageRoot.appendingPathComponent("deploy/local/ctl.sh").path
    }

    /// The package's top folder, found from this source file's location.
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // HeraldTesting
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()
    }

    /// A name no other test run uses, for queues, exchanges and database schemas.
    public static func uniqueName(_ prefix: String) -> String {
        "\(prefix).\(UInt32.random(in: .min ... .max))"
    }

    /// Returns when every one of `services` accepts TCP connections at its URL; otherwise
    /// cancels the running test (or suite) with a note, or throws ``TestEnvironmentError`` when
    /// ``requireServicesVariable`` is set. Each service is probed once per test process.
    public static func require(_ services: [TestService]) async throws {
        var missing: [String] = []
        for service in services where await !(probes[service]?.value ?? true) {
            missing.append("\(service.rawValue) at \(service.url)")
        }
        guard !missing.isEmpty else { return }
        let what = missing.joined(separator: " and ")
        if let required = value(requireServicesVariable), required != "0" {
            throw TestEnvironmentError(
                "\(what) does not accept connections, and \(requireServicesVariable)=\(required): integration tests fail rather than skip")
        }
        let note = "integration test: needs \(what), which does not accept connections (deploy/local/test.sh starts the services and runs every test)"
        #if compiler(>=6.3)
            try Test.cancel(Comment(rawValue: note))
        #else
            throw TestEnvironmentError(note)
        #endif
    }

    public static func require(_ services: TestService...) async throws {
        try await require(services)
    }

    /// One reachability probe per service, started on first use.
    private static let probes: [TestService: Task<Bool, Never>] = Dictionary(
        uniqueKeysWithValues: TestService.allCases.map { service in (service, Task { await acceptsConnections(service) }) }
    )

    /// Whether the service's host and port accept a TCP connection within two seconds. A URL
    /// whose host cannot be read (a Unix socket) counts as reachable: the test then tries it.
    private static func acceptsConnections(_ service: TestService) async -> Bool {
        guard let components = URLComponents(string: service.url), let host = components.host, !host.isEmpty else { return true }
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.seconds(2))
                .connect(host: host, port: components.port ?? service.defaultPort)
                .get()
            try? await channel.close().get()
            return true
        } catch {
            return false
        }
    }

    private static func value(_ name: String) -> String? {
        guard let raw = ProcessInfo.processInfo.environment[name], !raw.isEmpty else { return nil }
        return raw
    }
}
