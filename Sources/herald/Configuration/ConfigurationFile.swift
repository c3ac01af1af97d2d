import Foundation
import Yams

/// Reads Herald's configuration file: YAML with one mapping per section,
///
///     amqp:
///       url: amqp://guest:guest@127.0.0.1:5672/
///     worker:
///       threads: 8
///
/// and flattens it to `section.name → value`. A sequence becomes a comma-separated list.
/// Keys outside the registry are refused so that a misspelt key cannot fall back to a default.
enum ConfigurationFile {
    static func load(_ path: String) throws(ConfigurationError) -> [SettingKey: String] {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(.unreadableFile, source: path, reason: "cannot read the file (\(error.localizedDescription))")
        }
        return try parse(text, path: path)
    }

    static func parse(_ text: String, path: String) throws(ConfigurationError) -> [SettingKey: String] {
        let root: Any?
        do {
            root = try Yams.load(yaml: text)
        } catch {
            throw ConfigurationError(.invalidFile, source: path, reason: "not valid YAML (\(error))")
        }
        guard let root else { return [:] }
        guard let sections = root as? [String: Any] else {
            throw ConfigurationError(.invalidFile, source: path, reason: "the top level must be a mapping of sections")
        }
        var values: [SettingKey: String] = [:]
        for (section, body) in sections {
            guard let entries = body as? [String: Any] else {
                throw ConfigurationError(.invalidFile, key: section, source: path, reason: "a section must be a mapping of keys")
            }
            for (name, value) in entries {
                let dotted = "\(section).\(name)"
                guard let key = SettingKey.named(dotted) else {
                    throw ConfigurationError(.unknownKey, key: dotted, source: path, reason: "no such key (see `herald config keys`)")
                }
                values[key] = try scalar(value, key: dotted, path: path)
            }
        }
        return values
    }

    private static func scalar(_ value: Any, key: String, path: String) throws(ConfigurationError) -> String {
        switch value {
        case let list as [Any]:
            var parts: [String] = []
            for item in list { parts.append(try scalar(item, key: key, path: path)) }
            return parts.joined(separator: ",")
        case is [String: Any]:
            throw ConfigurationError(.invalidFile, key: key, source: path, reason: "expected a value, found a mapping")
        default:
            return String(describing: value)
        }
    }
}
