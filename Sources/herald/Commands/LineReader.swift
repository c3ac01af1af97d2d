import Foundation

/// Reads a file (or standard input) one line at a time in 64 KiB blocks, so that a command can
/// stream an input of any size in constant memory. Lines end with `\n` (a `\r` before it is
/// left for the caller); the last line may lack it.
final class LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false
    /// The bytes consumed so far, for progress against the file's size.
    private(set) var bytesRead = 0

    /// `path` '-' reads standard input. Throws when the file cannot be opened.
    init(path: String) throws {
        handle = path == "-" ? FileHandle.standardInput : try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    }

    /// The next line without its `\n`, or nil at the end.
    func next() throws -> String? {
        while true {
            if let end = buffer[start...].firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                start = end + 1
                return line
            }
            if finished {
                guard start < buffer.count else { return nil }
                let line = String(decoding: buffer[start...], as: UTF8.self)
                start = buffer.count
                return line
            }
            buffer.removeFirst(start)
            start = 0
            let block = try handle.read(upToCount: 65_536) ?? Data()
            if block.isEmpty { finished = true }
            bytesRead += block.count
            buffer.append(contentsOf: block)
        }
    }
}
