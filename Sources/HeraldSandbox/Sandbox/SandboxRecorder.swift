import Foundation
import Synchronization

/// Keeps every accepted push in memory (the most recent ``memoryLimit``) and appends it as one
/// JSON line to the record file, if one is set. Each line is one `write(2)` to a file opened
/// with `O_APPEND`.
///
/// Thread rules: `Sendable`; one lock around the list and the write.
public final class SandboxRecorder: Sendable {
    private struct State {
        var pushes: [RecordedPush] = []
        var total = 0
        var descriptor: Int32?
    }

    public let file: String?
    public let memoryLimit: Int
    private let state: Mutex<State>

    /// - Throws: ``SandboxError`` when `file` cannot be opened.
    public init(file: String?, memoryLimit: Int = 100_000) throws {
        var descriptor: Int32?
        if let file {
            let fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw SandboxError(.cannotWriteFiles, detail: "cannot open the record file \(file): \(String(cString: strerror(errno)))")
            }
            descriptor = fd
        }
        self.file = file
        self.memoryLimit = max(1, memoryLimit)
        self.state = Mutex(State(descriptor: descriptor))
    }

    deinit {
        state.withLock { state in
            if let fd = state.descriptor { close(fd) }
        }
    }

    func record(_ push: RecordedPush) {
        let line = push.jsonLine()
        state.withLock { state in
            state.total += 1
            state.pushes.append(push)
            if state.pushes.count > memoryLimit { state.pushes.removeFirst(state.pushes.count - memoryLimit) }
            if let fd = state.descriptor {
                line.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                        if n < 0 {
                            if errno == EINTR { continue }
                            return
                        }
                        offset += n
                    }
                }
            }
        }
    }

    /// The pushes kept in memory, oldest first.
    public var pushes: [RecordedPush] { state.withLock { $0.pushes } }
    /// Pushes recorded since start (including those dropped from memory).
    public var count: Int { state.withLock { $0.total } }

    /// Closes the record file; later pushes are kept in memory only.
    func finish() {
        state.withLock { state in
            if let fd = state.descriptor { close(fd) }
            state.descriptor = nil
        }
    }
}
