import ArgumentParser
import Foundation
import Logging

/// Options every command takes: where the configuration file is and how loud the log is.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file (YAML). Default: $HERALD_CONFIG, if set.")
    var config: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String?

    /// Loads file and environment, then applies `--log-level`. Commands add their own flags.
    func settings() throws -> Settings {
        let path = config ?? ProcessInfo.processInfo.environment["HERALD_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        var settings = try Settings(filePath: path)
        settings.set(.logLevel, flag: logLevel)
        _ = try settings.choice(.logLevel, default: Logger.Level.info)
        if try settings.choice(.logFormat, default: LogFormat.text) == .json {
            LogFormat.bootstrapJSON
        }
        return settings
    }
}

/// `log.format`: swift-log's default text lines, or ``JSONLogHandler``'s JSON lines.
enum LogFormat: String, CaseIterable {
    case text, json

    /// swift-log allows one bootstrap per process.
    static let bootstrapJSON: Void = LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
}
