import Foundation
import HeraldCore
import HeraldDelivery
import Logging

/// A `herald sandbox` child process for `herald bench --providers`: started from this binary on
/// free loopback ports in a temporary folder, so that the real APNs and FCM senders can be
/// measured end to end. Its CPU is read from `/proc/<pid>/stat`; it is stopped (SIGTERM) and its
/// folder removed by ``stop()``.
final class BenchSandbox {
    let directory: URL
    private let process: Process

    var pid: Int32 { process.processIdentifier }

    /// Starts it and waits until it wrote its `herald.yaml` (at most 30 s).
    init(responseDelay: Duration) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bench-sandbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let milliseconds = Int(responseDelay.seconds * 1000)
        process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        process.arguments = [
            "sandbox", "--dir", directory.path, "--apns-port", "0", "--fcm-port", "0", "--response-delay", "\(milliseconds)ms",
            "--record", recordPath,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let configuration = directory.appendingPathComponent("herald.yaml")
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: configuration.path)
            || !FileManager.default.fileExists(atPath: directory.appendingPathComponent("sandbox.json").path)
        {
            guard process.isRunning, ContinuousClock.now < deadline else {
                stop()
                throw BenchError("herald sandbox did not start (exit status \(process.isRunning ? "none yet" : "\(process.terminationStatus)"))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The worker's provider sender configured from the sandbox's `herald.yaml`, the way
    /// `herald worker --config <dir>/herald.yaml` builds it.
    func providerSender(logger: Logger) throws -> any PushSender {
        var environment = ProcessInfo.processInfo.environment
        environment[SettingKey.workerSender.environmentName] = SenderSettings.Kind.providers.rawValue
        let settings = try Settings(filePath: directory.appendingPathComponent("herald.yaml").path, environment: environment)
        return try SenderSettings.makeSender(settings: settings, logger: logger)
    }

    /// The sandbox's CPU seconds so far.
    var cpuSeconds: Double? { ProcessCPU.seconds(pid: String(pid)) }

    /// Where it records every push it accepts (JSON lines), complete once ``terminate()``
    /// returned.
    var recordPath: String { directory.appendingPathComponent("pushes.jsonl").path }

    /// Stops it (SIGTERM: it writes what it has not yet written of its record and exits) and
    /// waits; its folder stays until ``stop()``.
    func terminate() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    func stop() {
        terminate()
        try? FileManager.default.removeItem(at: directory)
    }
}
