import Foundation
import HeraldCore
import HeraldSupport

/// Writes every delivery as one JSON object per line, to standard output or a file: the local
/// default sender, so that Herald runs end to end without Apple or Google accounts.
///
/// A line holds `time`, `delivery_key`, `device_id`, `platform`, `app`, `token`, `user_id`,
/// `event_id`, `position` and `payload` (the exact body a provider would receive, as JSON).
/// Each line is written with a single `write(2)` to a file opened with `O_APPEND` before `send`
/// returns, so a crash never loses a line that was reported sent. A kill can still tear the line
/// being written (Linux ends a write at a page boundary once the process is killed): that line's
/// delivery was not reported sent, so it is sent again; the torn line is ignored when the file is
/// read back, and the next start ends it with a newline first, so that the next line stays whole.
///
/// When writing to a file, the delivery keys already in it are read at start-up, so
/// ``reconcile(_:)`` can tell the worker that a delivery whose outcome was lost in a crash did
/// reach the file: the worker then records it instead of writing it twice.
public actor LogSender: PushSender {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var written: Set<String>

    /// Writes to standard output.
    public init() {
        descriptor = STDOUT_FILENO
        ownsDescriptor = false
        written = []
    }

    /// Appends to `path`, creating it when missing.
    /// - Throws: ``LogSenderError`` when the file cannot be opened or read.
    public init(path: String) throws(LogSenderError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw LogSenderError(.cannotOpen, path: path, reason: String(cString: strerror(errno)))
        }
        descriptor = fd
        ownsDescriptor = true
        do throws(LogSenderError) {
            let contents = try Self.contents(ofFileAt: path)
            written = Self.deliveryKeys(in: contents)
            if let last = contents.last, last != 0x0A, let failure = [UInt8(0x0A)].withUnsafeBytes({ Self.writeAll(fd, $0) }) {
                throw LogSenderError(.cannotWrite, path: path, reason: "cannot end its torn last line (\(failure))")
            }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    public func send(_ delivery: PushDelivery) async -> DeliveryOutcome {
        var line = Self.line(for: delivery, at: Date())
        line.append(0x0A)
        let result = line.withUnsafeBytes { buffer in
            Self.writeAll(descriptor, buffer)
        }
        if let failure = result {
            return .retryAfter(nil, reason: "log sender cannot write: \(failure)")
        }
        if ownsDescriptor { written.insert(delivery.deliveryKey.rawValue) }
        return .sent
    }

    public func reconcile(_ deliveryKey: DeliveryKey) async -> ReconcileAnswer {
        guard ownsDescriptor else { return .unknown }
        return written.contains(deliveryKey.rawValue) ? .delivered : .notDelivered
    }

    /// The JSON line for `delivery` (without the newline).
    static func line(for delivery: PushDelivery, at time: Date) -> [UInt8] {
        var fields: [(String, JSONValue)] = [
            ("time", .string(ISO8601DateFormatter.string(from: time, timeZone: .gmt, formatOptions: [.withInternetDateTime, .withFractionalSeconds]))),
            ("delivery_key", .string(delivery.deliveryKey.rawValue)),
            ("device_id", .string(delivery.deviceId)),
            ("platform", .string(delivery.platform.rawValue)),
            ("token", .string(delivery.target.token)),
            ("user_id", .string(delivery.userId)),
            ("event_id", .string(delivery.eventId)),
            ("position", .int(Int(delivery.position))),
        ]
        if let app = delivery.target.app { fields.append(("app", .string(app))) }
        var line: [UInt8] = [UInt8(ascii: "{")]
        for (name, value) in fields {
            line += JSONValue.string(name).serialized()
            line.append(UInt8(ascii: ":"))
            line += value.serialized()
            line.append(UInt8(ascii: ","))
        }
        // The payload is already canonical JSON: embedded as it is, byte for byte.
        line += JSONValue.string("payload").serialized()
        line.append(UInt8(ascii: ":"))
        line += delivery.payload.body
        line.append(UInt8(ascii: "}"))
        return line
    }

    /// The file as it is now.
    static func contents(ofFileAt path: String) throws(LogSenderError) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw LogSenderError(.cannotRead, path: path, reason: "cannot read it back (\(error.localizedDescription))")
        }
    }

    /// The `delivery_key` of every complete line (a torn line is ignored).
    static func deliveryKeys(in data: Data) -> Set<String> {
        var keys: Set<String> = []
        for line in data.split(separator: 0x0A) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                let key = object["delivery_key"] as? String
            else { continue }
            keys.insert(key)
        }
        return keys
    }

    /// Writes the whole buffer, retrying short writes and EINTR; the error text on failure.
    private static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> String? {
        var offset = 0
        while offset < buffer.count {
            let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += n
        }
        return nil
    }
}

/// The log sender's file cannot be opened or read.
public struct LogSenderError: Error, Sendable, CustomStringConvertible {
    public typealias Code = ErrorCode<LogSenderError>

    public let code: Code
    public let path: String
    public let reason: String

    init(_ code: Code, path: String, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    public var description: String { "log sender file \(path): \(reason)" }
}

extension ErrorCode where Domain == LogSenderError {
    public static let cannotOpen = Self("cannot_open")
    public static let cannotRead = Self("cannot_read")
    public static let cannotWrite = Self("cannot_write")
}
