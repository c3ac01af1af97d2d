import Glibc

/// A self-pipe that wakes the connection thread out of `poll` when a command arrives, so commands
/// run within microseconds instead of waiting for the poll timeout.
///
/// Both ends are non-blocking: a full pipe already means "wake up". The descriptors are closed in
/// `deinit`, when no handle can signal any more.
final class WakeSignal: Sendable {
    let readDescriptor: Int32
    private let writeDescriptor: Int32

    init() throws(AMQPError) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else {
            throw AMQPError(
                code: .connectionFailed,
                call: "pipe",
                message: String(cString: strerror(errno))
            )
        }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    func signal() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Empties the pipe (called by the connection thread when `poll` finds it readable). A short
    /// read has emptied it: the writers add one byte per wake, and only this thread reads.
    func drain() {
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { buffer in
            while read(readDescriptor, buffer.baseAddress, buffer.count) == buffer.count {}
        }
    }
}
