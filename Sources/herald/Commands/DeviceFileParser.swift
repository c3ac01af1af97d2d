import Foundation
import HeraldCore
import HeraldStore

/// Reads a device export for `herald devices import`: JSON lines (one object per line) or CSV
/// (a header line naming the columns, or the columns in the default order). Fields: `device_id`,
/// `platform` (ios|android), `token`, `user_id`, `culture`, `zone`, `branch`, `tags` (a JSON
/// array, or in CSV separated by `;`), `app`. Bad rows are returned with their line numbers;
/// the good ones are still imported.
///
/// The parser reads one line at a time (``parse(line:number:)``), so that an import streams a
/// file of any size: the first line with content decides between JSON lines and CSV.
struct DeviceFileParser {
    static let columns = ["device_id", "platform", "token", "user_id", "culture", "zone", "branch", "tags", "app"]

    struct Problem: Error, Sendable {
        let line: Int
        let reason: String
    }

    /// JSON lines or CSV, once the first line with content was seen.
    private var isJSON: Bool?
    private var header = columns
    private var sawHeader = false

    /// The whole of `text` at once (tests and small inputs).
    static func parse(_ text: String) -> (registrations: [DeviceRegistration], problems: [Problem]) {
        var parser = DeviceFileParser()
        var registrations: [DeviceRegistration] = []
        var problems: [Problem] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            switch parser.parse(line: String(line), number: index + 1) {
            case .success(let registration)?: registrations.append(registration)
            case .failure(let problem)?: problems.append(problem)
            case nil: break
            }
        }
        return (registrations, problems)
    }

    /// One line of the file (its number counted from 1): a registration, a problem, or nil for
    /// a blank line, a `#` comment or the CSV header.
    mutating func parse(line raw: String, number: Int) -> Result<DeviceRegistration, Problem>? {
        let line = (raw.hasSuffix("\r") ? String(raw.dropLast()) : raw).trimmingCharacters(in: .whitespaces)
        if line.isEmpty || line.hasPrefix("#") { return nil }
        let isJSON = self.isJSON ?? line.hasPrefix("{")
        self.isJSON = isJSON
        var fields: [String: String] = [:]
        var tags: [String] = []
        if isJSON {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                return .failure(Problem(line: number, reason: "not a JSON object"))
            }
            for (key, value) in object {
                if key == "tags" {
                    if let list = value as? [String] { tags = list } else if let text = value as? String { tags = Self.splitTags(text) }
                } else if let text = value as? String {
                    fields[key] = text
                } else if let number = value as? NSNumber {
                    fields[key] = number.stringValue
                }
            }
        } else {
            let cells = Self.splitCSV(line)
            if !sawHeader, cells.contains("device_id") {
                header = cells.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                sawHeader = true
                return nil
            }
            sawHeader = true
            for (column, cell) in zip(header, cells) where !cell.isEmpty {
                if column == "tags" { tags = Self.splitTags(cell) } else { fields[column] = cell }
            }
        }
        return Self.registration(fields, tags: tags).mapError { Problem(line: number, reason: $0.reason) }
    }

    private struct RowError: Error { let reason: String }

    private static func registration(_ fields: [String: String], tags: [String]) -> Result<DeviceRegistration, RowError> {
        func value(_ name: String) -> String? {
            fields[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        guard let deviceId = value("device_id") else { return .failure(RowError(reason: "device_id is missing")) }
        guard let platformName = value("platform") else { return .failure(RowError(reason: "platform is missing")) }
        guard let platform = Platform(name: platformName) else {
            return .failure(RowError(reason: "platform '\(platformName.prefix(20))' is not ios or android"))
        }
        guard let userId = value("user_id") else { return .failure(RowError(reason: "user_id is missing")) }
        guard let culture = value("culture") else { return .failure(RowError(reason: "culture is missing")) }
        return .success(
            DeviceRegistration(
                deviceId: deviceId, app: value("app"), platform: platform, token: value("token"), culture: culture, userId: userId,
                zoneId: value("zone"), branchId: value("branch"),
                tags: Set(tags.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
            ))
    }

    private static func splitTags(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == ";" || $0 == "|" }).map(String.init)
    }

    /// One CSV line: commas separate, double quotes quote (`""` is a quote).
    static func splitCSV(_ line: String) -> [String] {
        var cells: [String] = []
        var current = ""
        var quoted = false
        var iterator = line.makeIterator()
        while let c = iterator.next() {
            if quoted {
                if c == "\"" {
                    // A doubled quote is a literal quote; a single one closes the field.
                    var lookahead = iterator
                    if lookahead.next() == "\"" {
                        current.append("\"")
                        iterator = lookahead
                    } else {
                        quoted = false
                    }
                } else {
                    current.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                cells.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(c)
            }
        }
        cells.append(current.trimmingCharacters(in: .whitespaces))
        return cells
    }
}
