import Foundation
import Logging
import Synchronization

/// `log.format: json`: one JSON object per line on standard error, for log shippers that index
/// fields (`ts`, `level`, `label`, `message`, then every metadata key as a string), instead of
/// parsing the text lines of swift-log's default handler.
struct JSONLogHandler: LogHandler {
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    private let label: String

    /// Lines from many threads must not interleave.
    private static let output = Mutex(FileHandle.standardError)

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata { fields[key] = "\(value)" }
        for (key, value) in metadataProvider?.get() ?? [:] { fields[key] = "\(value)" }
        for (key, value) in event.metadata ?? [:] { fields[key] = "\(value)" }
        fields["ts"] = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = "\(event.message)"
        guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        // Never `write(_:)`: it traps when standard error is gone (EPIPE after a journald
        // restart, a full disk); a lost log line must not end the process.
        Self.output.withLock { try? $0.write(contentsOf: line) }
    }
}
