import Foundation

/// The resolved configuration: flags override environment variables, which override the file,
/// which overrides the defaults each command passes. Typed getters validate a value once and
/// throw a `ConfigurationError` naming the key and the value's source.
struct Settings: Sendable {
    private let file: [SettingKey: String]
    private let filePath: String?
    private let environment: [String: String]
    private var flags: [SettingKey: String]
    /// The keys the running command has a flag for, given or not: only those flags are named
    /// in a hint.
    private var offered: Set<SettingKey> = []

    init(filePath: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigurationError) {
        self.filePath = filePath
        self.file = try filePath.map { (path) throws(ConfigurationError) in try ConfigurationFile.load(path) } ?? [:]
        self.environment = environment
        self.flags = [:]
    }

    /// Builds settings from already-parsed layers; used by tests.
    init(file: [SettingKey: String], environment: [String: String], flags: [SettingKey: String] = [:]) {
        self.file = file
        self.filePath = "configuration file"
        self.environment = environment
        self.flags = flags
    }

    /// Applies a command-line flag. `nil` (flag not given) leaves the lower layers in charge.
    mutating func set(_ key: SettingKey, flag value: String?) {
        offered.insert(key)
        if let value { flags[key] = value }
    }

    /// The raw value and where it came from, or nil when no layer sets it.
    func lookup(_ key: SettingKey) -> (value: String, source: String)? {
        if let value = flags[key] { return (value, "flag for \(key.dotted)") }
        if let value = environment[key.environmentName], !value.isEmpty { return (value, key.environmentName) }
        if let value = file[key], let filePath { return (value, filePath) }
        return nil
    }

    func string(_ key: SettingKey) -> String? {
        lookup(key).map(\.value).flatMap { $0.isEmpty ? nil : $0 }
    }

    func string(_ key: SettingKey, default fallback: String) -> String {
        string(key) ?? fallback
    }

    func require(_ key: SettingKey) throws(ConfigurationError) -> String {
        guard let value = string(key) else {
            throw ConfigurationError(.missing, key: key.dotted, reason: "not set; use \(howToSet(key))")
        }
        return value
    }

    /// "--database-url, HERALD_DATABASE_URL or `database.url` in the configuration file": the
    /// flag only when the running command has it.
    func howToSet(_ key: SettingKey) -> String {
        let file = "`\(key.dotted)` in the configuration file"
        guard let flag = key.flag, offered.contains(key) else { return "\(key.environmentName) or \(file)" }
        return "\(flag), \(key.environmentName) or \(file)"
    }

    func int(_ key: SettingKey, default fallback: Int, range: ClosedRange<Int> = 0...Int.max) throws(ConfigurationError) -> Int {
        guard let (raw, source) = lookup(key) else { return fallback }
        guard let value = Int(raw.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw invalid(key, source, raw, expected: "a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func bool(_ key: SettingKey, default fallback: Bool) throws(ConfigurationError) -> Bool {
        guard let (raw, source) = lookup(key) else { return fallback }
        switch raw.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw invalid(key, source, raw, expected: "true or false")
        }
    }

    /// Durations are written `250ms`, `30s`, `5m`, `2h` or `1d`; a bare number means seconds.
    func duration(_ key: SettingKey, default fallback: Duration) throws(ConfigurationError) -> Duration {
        guard let (raw, source) = lookup(key) else { return fallback }
        guard let value = Settings.parseDuration(raw) else {
            throw invalid(key, source, raw, expected: "a duration such as 250ms, 30s, 5m, 2h")
        }
        return value
    }

    /// A comma-separated list (a YAML sequence in the file), blanks removed.
    func list(_ key: SettingKey) -> [String] {
        guard let raw = string(key) else { return [] }
        return raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func choice<T: RawRepresentable>(_ key: SettingKey, default fallback: T) throws(ConfigurationError) -> T
    where T: CaseIterable, T.RawValue == String {
        guard let (raw, source) = lookup(key) else { return fallback }
        guard let value = T(rawValue: raw.lowercased()) else {
            let options = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw invalid(key, source, raw, expected: "one of \(options)")
        }
        return value
    }

    static func parseDuration(_ raw: String) -> Duration? {
        let text = raw.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, seconds) in units where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count)
            // "ms" must not be read as minutes of "…m" followed by "s".
            if suffix == "s", number.hasSuffix("m") { continue }
            guard let amount = Double(number), amount >= 0, amount.isFinite else { return nil }
            return .milliseconds(Int64((amount * seconds * 1000).rounded()))
        }
        guard let amount = Double(text), amount >= 0, amount.isFinite else { return nil }
        return .milliseconds(Int64((amount * 1000).rounded()))
    }

    private func invalid(_ key: SettingKey, _ source: String, _ raw: String, expected: String) -> ConfigurationError {
        let shown = key.isSecret ? "the value" : "'\(raw)'"
        return ConfigurationError(.invalidValue, key: key.dotted, source: source, reason: "\(shown) is not \(expected)")
    }
}
