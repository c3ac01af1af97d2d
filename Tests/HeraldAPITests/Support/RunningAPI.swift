import Foundation
import HeraldTesting
import HummingbirdTesting
import Synchronization

/// A `herald api` (or `herald serve`) process started for a test: waits (bounded) for its "listening on" line to
/// learn the port it bound (`--listen 127.0.0.1:0`), and is stopped with SIGTERM (SIGKILL after
/// 10 s) by ``stop()``, which returns its exit status.
final class RunningAPI: Sendable {
    let process: Process
    let port: Int
    private let output: OutputBuffer

    /// Everything the process printed so far.
    var log: String { output.text }

    final class OutputBuffer: Sendable {
        private let value = Mutex("")
        var text: String { value.withLock { $0 } }
        func append(_ data: Data) { value.withLock { $0 += String(decoding: data, as: UTF8.self) } }
    }

    static func start(command: String = "api", environment: [String: String], timeout: Duration = .seconds(60)) async throws -> RunningAPI {
        let process = Process()
        process.executableURL = HeraldCLI.executable
        process.arguments = [command, "--listen", "127.0.0.1:0"]
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HERALD_") || $0.key.hasPrefix("HERALD_TEST_") }
        env.merge(environment) { $1 }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = OutputBuffer()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { output.append(data) }
        }
        try process.run()
        var port: Int?
        do {
            try await waitUntil("herald \(command) listening", timeout: timeout) {
                let text = output.text
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("herald \(command) listening on ") }),
                    let value = line.split(separator: ":").last.flatMap({ Int($0) })
                {
                    port = value
                    return true
                }
                guard process.isRunning else { throw TestEnvironmentError("herald \(command) exited (\(process.terminationStatus)): \(text)") }
                return false
            }
        } catch {
            if process.isRunning { process.terminate() }
            throw error
        }
        return RunningAPI(process: process, port: port ?? 0, output: output)
    }

    private init(process: Process, port: Int, output: OutputBuffer) {
        self.process = process
        self.port = port
        self.output = output
    }

    /// Runs `body` with a client connected to the process.
    func withClient<T: Sendable>(_ body: @escaping @Sendable (APIClient) async throws -> T) async throws -> T {
        try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
            try await body(APIClient(live: client))
        }
    }

    @discardableResult
    func stop() async throws -> Int32 {
        if process.isRunning { process.terminate() }
        do {
            try await waitUntil("herald api exit", timeout: .seconds(10)) { !self.process.isRunning }
        } catch {
            kill(process.processIdentifier, SIGKILL)
            try await waitUntil("herald api killed", timeout: .seconds(5)) { !self.process.isRunning }
        }
        (process.standardOutput as? Pipe)?.fileHandleForReading.readabilityHandler = nil
        return process.terminationStatus
    }
}
