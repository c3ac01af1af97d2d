import Foundation

/// A private RabbitMQ and PostgreSQL for one test, started with `deploy/local/ctl.sh` on their
/// own ports, node name and data folder, so that the test may restart them while other suites
/// use the shared services. ``shutdown()`` stops both and deletes the folder.
public struct PrivateStack: Sendable {
    public let directory: URL
    public let amqpPort: Int
    public let postgresPort: Int
    public let nodeName: String

    public var amqpURL: String { "amqp://guest:guest@127.0.0.1:\(amqpPort)/" }
    /// The `herald_test` database of the private server.
    public var databaseURL: String { "postgres://postgres@127.0.0.1:\(postgresPort)/herald_test" }

    /// Starts both services (about 10 s, mostly RabbitMQ).
    public static func start() throws -> PrivateStack {
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let stack = PrivateStack(
            directory: URL(fileURLWithPath: "/tmp/herald-private-\(suffix)"),
            amqpPort: Int.random(in: 30_000...39_999),
            postgresPort: Int.random(in: 40_000...44_999),
            nodeName: "herald-\(suffix)@localhost"
        )
        do {
            try stack.control("start", "postgres")
            try stack.control("start", "rabbitmq")
        } catch {
            stack.shutdown()
            throw error
        }
        return stack
    }

    /// `ctl.sh restart rabbitmq|postgres`.
    public func restart(_ service: String) throws {
        try control("restart", service)
    }

    public func stop(_ service: String) throws {
        try control("stop", service)
    }

    public func start(_ service: String) throws {
        try control("start", service)
    }

    /// Stops both services and deletes their data.
    public func shutdown() {
        try? control("stop", "rabbitmq")
        try? control("stop", "postgres")
        try? FileManager.default.removeItem(at: directory)
    }

    private func control(_ action: String, _ service: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [TestEnvironment.packageRoot.appendingPathComponent("deploy/local/ctl.sh").path, action, service]
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_LOCAL_DIR"] = directory.path
        environment["HERALD_LOCAL_AMQP_PORT"] = String(amqpPort)
        environment["HERALD_LOCAL_PG_PORT"] = String(postgresPort)
        environment["HERALD_LOCAL_RMQ_NODE"] = nodeName
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestEnvironmentError("ctl.sh \(action) \(service) failed (\(process.terminationStatus)): \(String(decoding: data, as: UTF8.self).suffix(2_000))")
        }
    }
}
