import Foundation

/// A JSON value for schema checks, from a response body (`JSONDecoder`, which never confuses
/// booleans and numbers) or from a YAML example (Yams' native Swift values).
enum JSONNode: Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONNode].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONNode].self))
        }
    }

    init(json bytes: [UInt8]) throws {
        self = try JSONDecoder().decode(JSONNode.self, from: Data(bytes))
    }

    init(yaml value: Any?) {
        switch value {
        case let value as Bool: self = .bool(value)
        case let value as Int: self = .number(Double(value))
        case let value as Double: self = .number(value)
        case let value as String: self = .string(value)
        case let value as [Any]: self = .array(value.map { JSONNode(yaml: $0) })
        case let value as [String: Any]: self = .object(value.mapValues { JSONNode(yaml: $0) })
        case let value as [AnyHashable: Any]:
            self = .object(Dictionary(uniqueKeysWithValues: value.map { ("\($0.key)", JSONNode(yaml: $0.value)) }))
        default: self = .null
        }
    }
}

/// A small JSON Schema checker for the subset docs/openapi.yaml uses: local `$ref`, `type` (a
/// name or a list), `properties`, `required`, `additionalProperties` (bool or schema),
/// `minProperties`, `items`, `maxItems`, `enum`, `const`, `pattern`, `minLength`, `maxLength`,
/// `minimum`, `maximum`, `allOf`, `anyOf`, `if`/`then`. Returns the problems found, each with
/// its JSON path.
struct SchemaValidator {
    let schemas: [String: Any]

    func validate(_ value: JSONNode, against schema: [String: Any], path: String = "$") -> [String] {
        if let ref = schema["$ref"] as? String {
            let name = String(ref.split(separator: "/").last ?? "")
            guard let target = schemas[name] as? [String: Any] else { return ["\(path): unknown $ref \(ref)"] }
            return validate(value, against: target, path: path)
        }
        var problems: [String] = []
        let types = schema["type"].map { $0 as? [String] ?? [$0 as? String ?? ""] }
        if let types, !types.contains(where: { Self.matches(value, type: $0) }) {
            return ["\(path): expected \(types.joined(separator: " or ")), got \(value)"]
        }
        for part in schema["allOf"] as? [[String: Any]] ?? [] {
            problems += validate(value, against: part, path: path)
        }
        if let choices = schema["anyOf"] as? [[String: Any]], !choices.contains(where: { validate(value, against: $0, path: path).isEmpty }) {
            problems.append("\(path): matches none of anyOf")
        }
        if let condition = schema["if"] as? [String: Any], let then = schema["then"] as? [String: Any], validate(value, against: condition, path: path).isEmpty
        {
            problems += validate(value, against: then, path: path)
        }
        if let constant = schema["const"], !Self.equal(value, constant) {
            problems.append("\(path): is not \(constant)")
        }
        switch value {
        case .string(let string):
            if let choices = schema["enum"] as? [Any], !choices.contains(where: { Self.equal(value, $0) }) {
                problems.append("\(path): '\(string)' is not one of \(choices)")
            }
            if let min = schema["minLength"] as? Int, string.count < min { problems.append("\(path): shorter than \(min)") }
            if let max = schema["maxLength"] as? Int, string.count > max { problems.append("\(path): longer than \(max)") }
            if let pattern = schema["pattern"] as? String, string.range(of: pattern, options: .regularExpression) == nil {
                problems.append("\(path): '\(string)' does not match \(pattern)")
            }
        case .number(let number):
            if let min = schema["minimum"] as? Int, number < Double(min) { problems.append("\(path): below \(min)") }
            if let max = schema["maximum"] as? Int, number > Double(max) { problems.append("\(path): above \(max)") }
        case .array(let items):
            if let max = schema["maxItems"] as? Int, items.count > max { problems.append("\(path): more than \(max) items") }
            if let itemSchema = schema["items"] as? [String: Any] {
                for (index, item) in items.enumerated() { problems += validate(item, against: itemSchema, path: "\(path)[\(index)]") }
            }
        case .object(let object):
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for name in schema["required"] as? [String] ?? [] where object[name] == nil {
                problems.append("\(path): missing required '\(name)'")
            }
            if let min = schema["minProperties"] as? Int, object.count < min { problems.append("\(path): fewer than \(min) properties") }
            for (name, member) in object {
                if let property = properties[name] as? [String: Any] {
                    problems += validate(member, against: property, path: "\(path).\(name)")
                } else if let additional = schema["additionalProperties"] as? [String: Any] {
                    problems += validate(member, against: additional, path: "\(path).\(name)")
                } else if schema["additionalProperties"] as? Bool == false {
                    problems.append("\(path): unexpected property '\(name)'")
                }
            }
        case .null, .bool:
            break
        }
        return problems
    }

    /// Whether a value equals a schema constant (`enum`, `const`) as Yams reads it.
    private static func equal(_ value: JSONNode, _ constant: Any) -> Bool {
        switch (value, constant) {
        case (.string(let string), let other as String): string == other
        case (.bool(let bool), let other as Bool): bool == other
        case (.null, _): constant is NSNull
        default: false
        }
    }

    private static func matches(_ value: JSONNode, type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("number", .number), ("null", .null): true
        case ("integer", .number(let number)): number.rounded() == number
        default: false
        }
    }
}
