import Foundation
import Hummingbird

/// A request body that must be one JSON object with known fields: read with the size limit,
/// parsed, and checked for unknown fields; the typed getters throw ``APIError`` naming the
/// field (`missing_field`, `invalid_json`). With `caseInsensitiveKeys` (the legacy endpoints,
/// whose .NET original matched names case-insensitively and whose seed writes both `tags` and
/// `Tags`) names are matched ignoring ASCII case.
struct JSONBody {
    private let fields: [String: JSONInput]

    /// Reads and checks the body of `request`.
    /// - Throws: `body_too_large` beyond `limit` bytes, `invalid_json`, `unknown_field`.
    static func read(
        _ request: Request, limit: Int, allowed: Set<String>, caseInsensitiveKeys: Bool = false
    ) async throws(APIError) -> JSONBody {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw tooLarge(limit)
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge(limit)
        } catch {
            throw APIError(.invalidJSON, "the request body could not be read", underlying: error)
        }
        return try JSONBody(bytes: Data(buffer.readableBytesView), allowed: allowed, caseInsensitiveKeys: caseInsensitiveKeys)
    }

    init(bytes: Data, allowed: Set<String>, caseInsensitiveKeys: Bool = false) throws(APIError) {
        guard !bytes.isEmpty else { throw APIError(.invalidJSON, "the request body is empty; a JSON object is expected") }
        let value: JSONInput
        do {
            value = try JSONDecoder().decode(JSONInput.self, from: bytes)
        } catch {
            throw APIError(.invalidJSON, "the request body is not valid JSON")
        }
        guard case .object(let members) = value else {
            throw APIError(.invalidJSON, "the request body must be a JSON object, not \(value.kindName)")
        }
        var fields: [String: JSONInput] = [:]
        for (name, member) in members {
            let key = caseInsensitiveKeys ? name.lowercased() : name
            guard allowed.contains(key) else {
                throw APIError(.unknownField, "unknown field '\(Self.printable(name))'; allowed: \(allowed.sorted().joined(separator: ", "))")
            }
            guard fields.updateValue(member, forKey: key) == nil else {
                throw APIError(.invalidJSON, "field '\(key)' appears more than once")
            }
        }
        self.fields = fields
    }

    /// A string field; `nil` when absent or `null` (with `required`, that throws `missing_field`).
    func string(_ name: String, required: Bool = false) throws(APIError) -> String? {
        switch fields[name] {
        case .string(let value)?: return value
        case nil, .null?:
            if required { throw APIError(.missingField, "field '\(name)' is required") }
            return nil
        case let other?: throw APIError(.invalidJSON, "field '\(name)' must be a string, not \(other.kindName)")
        }
    }

    func requiredString(_ name: String) throws(APIError) -> String {
        guard let value = try string(name, required: true) else { throw APIError(.missingField, "field '\(name)' is required") }
        return value
    }

    /// An array of strings; `nil` when absent or `null`.
    func strings(_ name: String) throws(APIError) -> [String]? {
        switch fields[name] {
        case nil, .null?: return nil
        case .array(let items)?:
            var result: [String] = []
            for item in items {
                guard case .string(let value) = item else {
                    throw APIError(.invalidJSON, "field '\(name)' must be an array of strings; it contains \(item.kindName)")
                }
                result.append(value)
            }
            return result
        case let other?: throw APIError(.invalidJSON, "field '\(name)' must be an array of strings, not \(other.kindName)")
        }
    }

    func bool(_ name: String) throws(APIError) -> Bool? {
        switch fields[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw APIError(.invalidJSON, "field '\(name)' must be a boolean, not \(other.kindName)")
        }
    }

    /// A whole number in `range`.
    func int(_ name: String, in range: ClosedRange<Int>) throws(APIError) -> Int? {
        switch fields[name] {
        case nil, .null?: return nil
        case .number(let value)?:
            // `Int(exactly:)`, not a comparison of Doubles: Double(Int64.max - 1) rounds up to
            // 2^63, and `Int(2^63)` would stop the process (`{"after": 9223372036854775807}`).
            guard let whole = Int(exactly: value), range.contains(whole) else {
                throw APIError(.invalidParameter, "field '\(name)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
            }
            return whole
        case let other?: throw APIError(.invalidJSON, "field '\(name)' must be a number, not \(other.kindName)")
        }
    }

    private static func tooLarge(_ limit: Int) -> APIError {
        APIError(.bodyTooLarge, "the request body is larger than \(limit) bytes")
    }

    /// A client-supplied name shown in an error: at most 64 characters, controls removed.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.properties.generalCategory != .control }.prefix(64)))
    }
}
