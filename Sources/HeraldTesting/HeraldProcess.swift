import Foundation

/// A `herald` command running in the background (`herald worker`, `herald sandbox`), with its
/// output going to files, that a test can signal (SIGTERM for a graceful stop, SIGKILL for a
/// crash) and wait for with a bound.
public final class HeraldProcess: @unchecked Sendable {
    // @unchecked: `process` is a Foundation `Process`, used only through its thread-safe calls
    // (processIdentifier, isRunning, terminationStatus) after `run()`; the
    // other fields are immutable.
    private let process: Process
    public let stdoutFile: URL
    public let stderrFile: URL

    /// Starts `herald arguments…` with `environment` added to this process's environment.
    public init(_ arguments: [String], environment: [String: String] = [:], outputDirectory: URL) throws {
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        let name = arguments.first ?? "herald"
        let stamp = UUID().uuidString.prefix(8)
        stdoutFile = outputDirectory.appendingPathComponent("\(name)-\(stamp).out")
        stderrFile = outputDirectory.appendingPathComponent("\(name)-\(stamp).err")
        for file in [stdoutFile, stderrFile] where !FileManager.default.createFile(atPath: file.path, contents: nil) {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        process = Process()
        process.executableURL = HeraldCLI.executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// Sends `signal` (e.g. `SIGTERM`, `SIGKILL`).
    public func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits at most `timeout` for the process to exit; returns its status, or nil if it is
    /// still running (then it is killed, so that no test leaves a process behind).
    @discardableResult
    public func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            // Polled (waitUntilExit spins a run loop no concurrency thread services).
            while process.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
            return nil
        }
        return process.terminationStatus
    }

    public var stdout: String { (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "" }
    public var stderr: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
    }
}
