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

    /// ``settings()`` with a command's flags applied in order (the groups, then the command's
    /// own in `also`), and the command's logger (`label`) as those settings configure it: the
    /// set-up every command that reads the configuration starts with.
    func settings(
        _ flags: any SettingFlags..., logger label: String, also: (inout Settings) -> Void = { _ in }
    ) throws -> (Settings, Logger) {
        var settings = try settings()
        for group in flags { group.apply(to: &settings) }
        also(&settings)
        return (settings, RuntimeSettings.logger(label, settings: settings))
    }
}

/// `log.format`: swift-log's default text lines, or ``JSONLogHandler``'s JSON lines.
enum LogFormat: String, CaseIterable {
    case text, json

    /// swift-log allows one bootstrap per process.
    static let bootstrapJSON: Void = LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
}
