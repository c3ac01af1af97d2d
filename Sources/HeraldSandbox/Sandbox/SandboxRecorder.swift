import Foundation
import NIOCore
import Synchronization

/// Keeps the most recent accepted pushes in memory (``memoryLimit`` of them; none at 0) and
/// appends every one as a JSON line to the record file, if one is set.
///
/// Recording is cheap for the servers: a push goes into a ring buffer and the file writer's
/// queue; the line is encoded and written, in batches, by the writer's own thread
/// (``RecordWriter``). ``flush()`` waits until every push recorded so far is in the file.
///
/// Thread rules: `Sendable`; one short lock around the ring buffer.
public final class SandboxRecorder: Sendable {
    private struct Memory {
        var pushes = CircularBuffer<RecordedPush>()
        var total = 0
    }

    public let file: String?
    public let memoryLimit: Int
    private let memory = Mutex(Memory())
    private let writer: RecordWriter?

    /// - Throws: ``SandboxError`` when `file` cannot be opened.
    public init(file: String?, memoryLimit: Int = 100_000) throws {
        if let file {
            let fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw SandboxError(.cannotWriteFiles, detail: "cannot open the record file \(file): \(String(cString: strerror(errno)))")
            }
            writer = RecordWriter(descriptor: fd)
        } else {
            writer = nil
        }
        self.file = file
        self.memoryLimit = max(0, memoryLimit)
    }

    deinit {
        writer?.stop()
    }

    func record(_ push: RecordedPush) {
        memory.withLock { memory in
            memory.total += 1
            guard memoryLimit > 0 else { return }
            if memory.pushes.count >= memoryLimit { memory.pushes.removeFirst() }
            memory.pushes.append(push)
        }
        writer?.enqueue(push)
    }

    /// Returns once every push recorded so far is in the record file (at once without one).
    public func flush() {
        writer?.flush()
    }

    /// The pushes kept in memory, oldest first.
    public var pushes: [RecordedPush] { memory.withLock { Array($0.pushes) } }
    /// Pushes recorded since start (including those dropped from memory).
    public var count: Int { memory.withLock { $0.total } }

    /// Writes what is queued and closes the record file; later pushes are kept in memory only.
    func finish() {
        writer?.stop()
    }
}
