import Foundation
import HeraldCore
import HeraldStore

/// Reads a device export for `herald devices import`: JSON lines (one object per line) or CSV
/// (a header line naming the columns, or the columns in the default order). Fields: `device_id`,
/// `platform` (ios|android), `token`, `user_id`, `culture`, `zone`, `branch`, `tags` (a JSON
/// array, or in CSV separated by `;`), `app`. Bad rows are returned with their line numbers;
/// the good ones are still imported.
enum DeviceFileParser {
    static let columns = ["device_id", "platform", "token", "user_id", "culture", "zone", "branch", "tags", "app"]

    struct Problem: Sendable {
        let line: Int
        let reason: String
    }

    static func parse(_ text: String) -> (registrations: [DeviceRegistration], problems: [Problem]) {
        var registrations: [DeviceRegistration] = []
        var problems: [Problem] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
        let firstContent = lines.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }?.trimmingCharacters(in: .whitespaces)
        let isJSON = firstContent?.hasPrefix("{") == true
        var header = columns
        var sawHeader = false
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            var fields: [String: String] = [:]
            var tags: [String] = []
            if isJSON {
                guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                    problems.append(Problem(line: number, reason: "not a JSON object"))
                    continue
                }
                for (key, value) in object {
                    if key == "tags" {
                        if let list = value as? [String] { tags = list } else if let text = value as? String { tags = splitTags(text) }
                    } else if let text = value as? String {
                        fields[key] = text
                    } else if let number = value as? NSNumber {
                        fields[key] = number.stringValue
                    }
                }
            } else {
                let cells = splitCSV(line)
                if !sawHeader, cells.contains("device_id") {
                    header = cells.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                    sawHeader = true
                    continue
                }
                sawHeader = true
                for (column, cell) in zip(header, cells) where !cell.isEmpty {
                    if column == "tags" { tags = splitTags(cell) } else { fields[column] = cell }
                }
            }
            switch registration(fields, tags: tags) {
            case .success(let registration): registrations.append(registration)
            case .failure(let problem): problems.append(Problem(line: number, reason: problem.reason))
            }
        }
        return (registrations, problems)
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
