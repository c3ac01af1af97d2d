import HeraldCore

/// Any JSON value, decoded strictly by `JSONDecoder` (a number is never a boolean and vice
/// versa), so that request bodies can be checked field by field with precise errors.
enum JSONInput: Decodable, Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONInput])
    case object([String: JSONInput])

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
        } else if let value = try? container.decode([JSONInput].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONInput].self))
        }
    }

    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONInput: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value.rounded() == value, abs(value) < 9_007_199_254_740_992 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONInput {
    /// The same value as HeraldCore's `JSONValue` (whole numbers written without a fraction).
    var jsonValue: JSONValue {
        switch self {
        case .null: .null
        case .bool(let value): .bool(value)
        case .number(let value):
            value.rounded() == value && abs(value) < 9_007_199_254_740_992 ? .number(String(Int64(value))) : .number(String(value))
        case .string(let value): .string(value)
        case .array(let items): .array(items.map(\.jsonValue))
        case .object(let members): .object(members.mapValues(\.jsonValue))
        }
    }

    /// An FCM v1 body (`{"message": {"token": …}}`) with the token replaced, or removed with
    /// `nil`; anything else unchanged.
    func replacingFCMToken(with token: String?) -> JSONInput {
        guard case .object(var root) = self, case .object(var message)? = root["message"] else { return self }
        message["token"] = token.map(JSONInput.string)
        root["message"] = .object(message)
        return .object(root)
    }

    subscript(key: String) -> JSONInput? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}
