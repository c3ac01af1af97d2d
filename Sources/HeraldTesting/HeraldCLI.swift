import Foundation

/// Runs the built `herald` executable as a separate process, the way an operator would.
public enum HeraldCLI {
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// The `herald` binary next to the test bundle (SwiftPM puts products in one folder).
    public static var executable: URL {
        let bundle = Bundle.main.bundleURL
        let candidates = [
            bundle.appendingPathComponent("herald"),
            bundle.deletingLastPathComponent().appendingPathComponent("herald"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }

    /// Runs `herald arguments…` to completion and returns its exit status and output.
    /// `timeout` bounds the run; a process still alive after it is killed.
    public static func run(
        _ arguments: [String],
        environment: [String: String] = [:],
        stdin: Data? = nil,
        timeout: Duration = .seconds(120)
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try? input.fileHandleForWriting.close()

        // Read both pipes concurrently so that a chatty process cannot block on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data()
        nonisolated(unsafe) var errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        let deadline = DispatchTime.now() + .milliseconds(Int(timeout.components.seconds * 1000))
        if group.wait(timeout: deadline) == .timedOut {
            process.terminate()
            group.wait()
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self)
        )
    }
}
