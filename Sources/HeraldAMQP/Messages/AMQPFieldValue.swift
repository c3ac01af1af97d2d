import Foundation

/// An AMQP field table: message headers, queue and consumer arguments. Keys are unique; the wire
/// order is not meaningful (tables are written sorted by key).
public typealias AMQPTable = [String: AMQPFieldValue]

/// One value of an AMQP field table (RabbitMQ's dialect of AMQP 0-9-1 field types).
///
/// Reading: every integer kind the broker may send (8…64-bit, signed or not) arrives as ``int(_:)``
/// (an unsigned 64-bit value above `Int64.max` is clamped), 32-bit floats as ``double(_:)``, long
/// and short strings as ``string(_:)`` (or ``bytes(_:)`` when not UTF-8). Nested tables and arrays
/// (e.g. the `x-death` header) decode recursively.
///
/// Writing: ``int(_:)`` is sent as a signed 64-bit `l`, ``double(_:)`` as `d`, ``string(_:)`` as a
/// long string `S`, ``timestamp(_:)`` as `T` (whole seconds since 1970).
///
/// Literals work: `["AvoidDublication": true, "x-retries": 3, "x-herald-error": "bad XML"]`.
public enum AMQPFieldValue: Sendable, Hashable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    /// A decimal: `value / 10^scale`.
    case decimal(value: UInt32, scale: UInt8)
    case string(String)
    case bytes([UInt8])
    /// Whole seconds since 1970 (AMQP timestamps have no fraction).
    case timestamp(Date)
    case array([AMQPFieldValue])
    case table(AMQPTable)
    case void

    public var stringValue: String? {
        switch self {
        case .string(let value): value
        case .bytes(let value): String(validating: value, as: UTF8.self)
        default: nil
        }
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var intValue: Int64? {
        switch self {
        case .int(let value): value
        case .bool(let value): value ? 1 : 0
        default: nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .int(let value): Double(value)
        case .decimal(let value, let scale): Double(value) / pow(10, Double(scale))
        default: nil
        }
    }

    public var dateValue: Date? {
        if case .timestamp(let value) = self { return value }
        return nil
    }

    public var arrayValue: [AMQPFieldValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var tableValue: AMQPTable? {
        if case .table(let value) = self { return value }
        return nil
    }
}

extension AMQPFieldValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: AMQPFieldValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, AMQPFieldValue)...) {
        self = .table(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
