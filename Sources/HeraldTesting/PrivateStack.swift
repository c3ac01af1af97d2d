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
    public static func start() async throws -> PrivateStack {
        // Where the shared services are not running, the ones to start here are not installed
        // either, as a rule: the test is cancelled with the same note as the others.
        try await TestEnvironment.require(.rabbitMQ, .postgreSQL)
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let stack = PrivateStack(
            directory: URL(fileURLWithPath: "/tmp/herald-private-\(suffix)"),
            // Below Linux's ephemeral range (32768-60999), where a busy test run's own outgoing
            // connections could hold the port: RabbitMQ also binds amqpPort + 20000 for Erlang
            // distribution (deploy/local/lib.sh).
            amqpPort: Int.random(in: 10_000...12_700),
            postgresPort: Int.random(in: 13_000...15_999),
            nodeName: "herald-\(suffix)@localhost"
        )
        do {
            try await stack.control("start", "postgres")
            try await stack.control("start", "rabbitmq")
        } catch {
            await stack.shutdown()
            throw error
        }
        return stack
    }

    /// `ctl.sh restart rabbitmq|postgres`.
    public func restart(_ service: String) async throws {
        try await control("restart", service)
    }

    public func stop(_ service: String) async throws {
        try await control("stop", service)
    }

    public func start(_ service: String) async throws {
        try await control("start", service)
    }

    /// Stops both services and deletes their data.
    public func shutdown() async {
        try? await control("stop", "rabbitmq")
        try? await control("stop", "postgres")
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs ctl.sh to completion (at most two minutes), its output appended to `ctl.log`.
    ///
    /// Spawned with `posix_spawn` and reaped with `waitpid`, not with Foundation's `Process`: on
    /// Linux its exit detection depends on a run loop that Swift concurrency threads do not
    /// service, and the servers the script starts keep inherited descriptors open.
    private func control(_ action: String, _ service: String) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let log = directory.appendingPathComponent("ctl.log").path
        let script = TestEnvironment.packageRoot.appendingPathComponent("deploy/local/ctl.sh").path
        var environment = ProcessInfo.processInfo.environment
        environment["HERALD_LOCAL_DIR"] = directory.path
        environment["HERALD_LOCAL_AMQP_PORT"] = String(amqpPort)
        environment["HERALD_LOCAL_PG_PORT"] = String(postgresPort)
        environment["HERALD_LOCAL_RMQ_NODE"] = nodeName
        environment["CTL_SCRIPT"] = script
        environment["CTL_LOG"] = log
        environment["CTL_DIR"] = directory.path
        // Run inside the stack's folder: RabbitMQ may leave an erl_crash.dump in its working directory.
        let arguments = ["/bin/bash", "-c", #"cd "$CTL_DIR" && exec "$CTL_SCRIPT" "$0" "$1" </dev/null >>"$CTL_LOG" 2>&1"#, action, service]
        let pid = try Self.spawn(arguments, environment: environment)
        let deadline = ContinuousClock.now + .seconds(120)
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 { throw TestEnvironmentError("waitpid failed for ctl.sh \(action) \(service): errno \(errno)") }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw TestEnvironmentError("ctl.sh \(action) \(service) did not finish in two minutes")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        let exited = status & 0x7F == 0
        let code = (status >> 8) & 0xFF
        guard exited && code == 0 else {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw TestEnvironmentError("ctl.sh \(action) \(service) failed (status \(status)): \(text.suffix(2_000))")
        }
    }

    private static func spawn(_ arguments: [String], environment: [String: String]) throws -> pid_t {
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        let result = posix_spawn(&pid, arguments[0], nil, nil, argv, envp)
        guard result == 0 else { throw TestEnvironmentError("posix_spawn \(arguments[0]) failed: errno \(result)") }
        return pid
    }
}
