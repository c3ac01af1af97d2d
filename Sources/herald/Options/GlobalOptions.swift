import ArgumentParser
import Foundation

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
        return settings
    }
}
